import type { Kysely } from 'kysely';
import { listCallsStoredFromList, listLiveCalls, markStaleLiveCalls } from '../store/calls-repo.js';
import { listUnsettledCalls, sampleCallsStoredFromList } from '../store/settle-repo.js';
import { listRetries } from '../store/retries-repo.js';
import type { Database } from '../store/schema.js';
import { pendingById, type Pending } from './page-planner.js';
import type { Drawn, RefetchListed } from './list-audit.js';
import { AUDIT_AFTER_SECONDS, type SettleAudit } from './settle-audit.js';

/** Get Calls handed to the fetcher at once by the follow-up passes. */
const BATCH = 100;

/**
 * Calls stored from their list entry by an earlier run that each run (detailFetch auto) asks Get
 * Call for again, drawn at random among all of them, to compare with that entry (see ListAudit).
 * The run's own audits meet only entries of that run; entries that differ from Get Call on a few
 * calls (a second device on 1 call in 20, left out of the list) could pass every one of them, and
 * the devices were never stored, ok, also after `sync --full` (session 28's probe, helper-60).
 * Drawn from every run's calls, such a difference is met sooner or later: 8 a night meet a
 * difference on 5 % of the calls with a chance of 1 − 0.95^8 ≈ 34 % each run, 95 % within 9 runs.
 */
export const LISTED_AUDITS = 8;

/**
 * The calls stored from their entries that a run compares with them again (as followUpFetches
 * does, and `sync --dry-run` counts): this run's spread audits the listing ended before, then
 * LISTED_AUDITS drawn among those written before `writtenBefore`, none of them in `skip`.
 */
export async function callsToDrawAgain(db: Kysely<Database>, appId: string, region: string, o: { unreached: readonly Drawn[]; writtenBefore: number; skip: (id: string) => boolean }): Promise<Drawn[]> {
  const unreached = o.unreached.filter((c) => !o.skip(c.sessionId));
  const taken = new Set(unreached.map((c) => c.sessionId));
  const earlier = (await sampleCallsStoredFromList(db, appId, region, { writtenBefore: o.writtenBefore, n: 4 * LISTED_AUDITS })).filter((c) => !o.skip(c.sessionId) && !taken.has(c.sessionId));
  return [...unreached, ...earlier.slice(0, LISTED_AUDITS)];
}

export interface FollowUpInput {
  db: Kysely<Database>;
  appId: string;
  region: string;
  now: number;
  liveMaxDays: number;
  settleDays: number;
  /** Live calls this run's listing showed (their entry said what changed). */
  listedLive: ReadonlySet<string>;
  /** Calls Get Call was already asked for in this run. */
  fetched: ReadonlySet<string>;
  /**
   * List entries are known to leave media out (`media`) or to differ from Get Call (`all`): calls
   * stored from them are fetched again. Asked after the other passes: an audit answered in the
   * retry pass may make the finding.
   */
  refetchListed: () => RefetchListed;
  /** Unix seconds this run started: calls written since were written by it. */
  runStartedAt: number;
  /** Audits fetched calls against a later answer (see SettleAudit); absent: no audit (a backfill). */
  settle?: SettleAudit | undefined;
  /**
   * List entries are trusted under audit (detailFetch auto): calls stored from them to be compared
   * with their entry, as audits owed: `unreached`, this run's spread audits whose drawn entry the
   * listing ended before (see ListAudit.unreachedDraws), and LISTED_AUDITS drawn among those earlier
   * runs stored.
   */
  auditListed?: { unreached: readonly Drawn[] } | undefined;
  fetchAndWrite: (pending: Pending[]) => Promise<void>;
  stopped: () => boolean;
}

export interface FollowUpResult {
  live: number;
  retried: number;
  unsettled: number;
  staled: number;
  /** Calls stored from list entries fetched again (refetchListed). */
  listed: number;
  /** Calls stored from list entries asked for again to compare with their entry (auditListed). */
  listedAudited: number;
  /** Fetched calls asked for again to compare (SettleAudit): a sample, or all of the settle window once details are known to change. */
  settled: number;
}

/**
 * After the listing, Get Call for the calls whose details can still change although their list
 * entry may not show it (issue 12):
 * - live calls the listing did not show (older than the window), until final; a call stuck live
 *   longer than liveMaxDays is marked stale instead and no longer costs a request per run;
 * - calls on the retry list (details that could not be had), whatever their age;
 * - final calls that look unsettled (recordings promised but absent, a joined participant without
 *   minutes, final without an end), until they settle or settleDays have passed since they ended;
 * - a sample of the final calls an earlier run fetched within settleDays, compared with what is
 *   stored (SettleAudit), and all of them once their details are known to change later;
 * - with detailFetch auto, a few calls stored from their list entry by earlier runs, drawn at
 *   random, compared with that entry (LISTED_AUDITS);
 * - once list entries are seen to leave recordings or transcriptions out, every call stored from
 *   such an entry; once they are seen to state anything differently from Get Call, every call
 *   stored from its entry (until each has been fetched; an interrupted run leaves the rest to the next).
 */
export async function followUpFetches(input: FollowUpInput): Promise<FollowUpResult> {
  const { db, appId, region, now } = input;
  const out: FollowUpResult = { live: 0, retried: 0, unsettled: 0, staled: 0, listed: 0, settled: 0, listedAudited: 0 };
  const done = new Set<string>();
  const run = async (pending: Pending[]): Promise<void> => {
    for (let i = 0; i < pending.length && !input.stopped(); i += BATCH) await input.fetchAndWrite(pending.slice(i, i + BATCH));
  };
  const skip = (id: string): boolean => input.fetched.has(id) || done.has(id);

  out.staled = await markStaleLiveCalls(db, appId, region, now - input.liveMaxDays * 86_400, now);
  const retries = await listRetries(db, appId, region);
  const attempts = new Map(retries.map((r) => [r.sessionId, r]));

  const live = (await listLiveCalls(db, appId, region)).filter((id) => !input.listedLive.has(id) && !skip(id));
  for (const id of live) done.add(id);
  out.live = live.length;
  await run(live.map((id) => pendingById(id, { live: true, retryAttempts: attempts.get(id)?.attempts ?? 0 })));

  // An audit without a comparable answer is asked again even when this run's listing asked for it:
  // a replica lagging once answers now, and the audit is done in the run that stored the entries.
  const again = retries.filter((r) => (r.reason === 'unanswered_audit' ? !done.has(r.sessionId) : !skip(r.sessionId)));
  for (const r of again) done.add(r.sessionId);
  out.retried = again.length;
  await run(again.map((r) => pendingById(r.sessionId, { live: r.reason === 'live_not_found', retryAttempts: r.attempts, ...(r.reason === 'unreadable_entry' ? { unreadableEntry: true } : {}), ...(r.reason === 'unanswered_audit' ? { owedAudit: true } : {}) })));

  const unsettled = (await listUnsettledCalls(db, appId, region, now - input.settleDays * 86_400)).filter((id) => !skip(id));
  for (const id of unsettled) done.add(id);
  out.unsettled = unsettled.length;
  await run(unsettled.map((id) => pendingById(id)));

  const settle = input.settle;
  if (settle) {
    const since = now - input.settleDays * 86_400;
    // An audit's sample first, then a few calls older than the window; once details are found (now
    // or before) to change within the window, all its other calls.
    for (const pass of ['audit', 'old', 'all'] as const) {
      if (pass === 'all' && (!settle.refetchAll || input.stopped())) break;
      const writtenBefore = pass === 'all' ? input.runStartedAt : Math.min(input.runStartedAt, now - AUDIT_AFTER_SECONDS);
      const checks = pass === 'old' ? await settle.oldCandidates(db, appId, region, { until: since, writtenBefore, skip }) : await settle.candidates(db, appId, region, { since, writtenBefore, skip });
      for (const id of checks.keys()) done.add(id);
      out.settled += checks.size;
      await run([...checks].map(([id, check]) => pendingById(id, { settle: check })));
    }
  }

  // Compared with the entry each was stored from, as an audit owed (see DetailFetcher): a
  // difference is the list audit's finding, and the pass below fetches every call stored so.
  if (input.auditListed && input.refetchListed() !== 'all' && !input.stopped()) {
    const drawn = await callsToDrawAgain(db, appId, region, { unreached: input.auditListed.unreached, writtenBefore: Math.min(input.runStartedAt, now - AUDIT_AFTER_SECONDS), skip });
    for (const c of drawn) done.add(c.sessionId);
    out.listedAudited = drawn.length;
    await run(drawn.map((c) => pendingById(c.sessionId, { owedAudit: true, drawn: true, listFingerprint: c.listFingerprint })));
  }

  const refetch = input.refetchListed();
  if (refetch !== undefined) {
    const listed = (await listCallsStoredFromList(db, appId, region, refetch)).filter((id) => !skip(id));
    out.listed = listed.length;
    await run(listed.map((id) => pendingById(id)));
  }
  return out;
}
