import type { ApiCall } from '../source/schemas.js';
import { POSITION_KEY_PREFIX, type StoredCallState } from '../store/calls-repo.js';
import { apiCallToRows, callTime, fingerprintJson, listEntryIsComplete, parseCall, receiverOf } from '../transform/call-rows.js';
import type { CallRows } from '../store/schema.js';
import { isFinalCall, isGroupReceiver } from '../transform/call-status.js';
import type { ListAudit } from './list-audit.js';
import type { SettleCheck } from './settle-audit.js';
import type { RecentCalls } from './recent-calls.js';

/** A list entry that parsed, with the one serialisation that serves its fingerprint and raw_json. */
export interface ListedEntry {
  call: ApiCall;
  raw: unknown;
  json: string;
  fp: string;
  /** callTime(): startedAt, else initiatedAt, else endedAt; null when it has none. */
  time: number | null;
}

export interface InvalidEntry {
  key: string;
  reason: string;
  raw: unknown;
}

/** A call whose details Get Call must supply. */
export interface Pending {
  call: ApiCall;
  /**
   * The list entry as JSON.stringify gave it; undefined when not listed. Get Call's answer is
   * compared with this text, so the parsed entry (three times its size, held while the Get is
   * pending, long enough to be copied by every young-generation GC) is not kept.
   */
  json: string | undefined;
  listFingerprint: string | null;
  /** The call is (or was stored) live: a not-found answer is believed only after a few runs. */
  live?: boolean;
  /** Earlier runs' attempts, when the call is on the retry list. */
  retryAttempts?: number;
  /** A complete-looking entry fetched to audit its media against Get Call (see ListAudit). */
  audit?: boolean;
  /** Stored as not found before this run: Get Call denying it again leaves the mark (see DetailFetcher). */
  notFoundBefore?: boolean;
  /** With notFoundBefore: its entry is the one stored, so a denial again has nothing to write. */
  sameEntry?: boolean;
  /** Its list entry did not parse (see unreadableEntries): only an answer that parses is written. */
  unreadableEntry?: boolean;
  /** That entry as sent: what Get Call leaves out is taken from it (withUnreadableEntry). */
  entryRaw?: unknown;
  /** Fetched again to compare with what an earlier run stored of it (see SettleAudit). */
  settle?: SettleCheck;
  /** A listed call the database already holds: what Get Call and its entry leave out may be in its stored payload. */
  stored?: boolean;
  /**
   * Listed earlier in this run with another entry: which of the two states the call as it is now is
   * not known, so what Get Call leaves out cannot be taken from this one (see DetailFetcher).
   */
  relisted?: boolean;
  /**
   * An audited entry that got no comparable answer (on the retry list as `unanswered_audit`): the
   * answer is compared with the entry it is stored from (see ListAudit.unanswered).
   */
  owedAudit?: boolean;
  /**
   * Drawn after the listing among calls stored from their entry (see followUpFetches): an answer
   * stating nothing other than that entry is not written (the call is not rewritten to no purpose).
   */
  drawn?: boolean;
}

/** A call known only by its id (live, on the retry list, unsettled): Get Call supplies all of it. */
export function pendingById(sessionId: string, extra: Partial<Pending> = {}): Pending {
  return { call: { sessionId } as ApiCall, json: undefined, listFingerprint: null, ...extra };
}

/** What RecentCalls holds for a call whose list entry did not parse (no fingerprint is that). */
const UNREADABLE = 'unreadable entry';

/**
 * List entries that do not parse but name their call, to be asked for with Get Call: a service that
 * writes a field one way in List Calls and another in Get Call kept such a call out of `calls` for
 * good, with the run ok, even with detailFetch always. Once per run each; the entry stays in
 * rejected_records. An answer that does not parse either is kept aside as well (see DetailFetcher),
 * and the run is partial. `unaskable`: entries without a sessionId Get Call could be asked with.
 */
export function unreadableEntries(invalid: readonly InvalidEntry[], recent: RecentCalls, page = 0): { pending: Pending[]; unaskable: InvalidEntry[] } {
  const pending: Pending[] = [];
  const unaskable: InvalidEntry[] = [];
  for (const e of invalid) {
    const id = e.raw !== null && typeof e.raw === 'object' ? (e.raw as { sessionId?: unknown }).sessionId : undefined;
    if (typeof id !== 'string' || id !== e.key || id.includes('\u0000') || e.reason.startsWith('sessionId')) {
      unaskable.push(e);
      continue;
    }
    if (recent.get(id) !== undefined) continue;
    recent.set(id, UNREADABLE, page);
    pending.push(pendingById(id, { unreadableEntry: true, entryRaw: e.raw }));
  }
  return { pending, unaskable };
}

/** Parses one List Calls page: each entry alone, so one bad record is rejected and the rest go on. */
export function parseListPage(entries: readonly unknown[], page: number): { valid: ListedEntry[]; invalid: InvalidEntry[] } {
  const valid: ListedEntry[] = [];
  const invalid: InvalidEntry[] = [];
  entries.forEach((raw, i) => {
    const parsed = parseCall(raw, `${POSITION_KEY_PREFIX}${page}#${i}`);
    if (!parsed.ok) {
      invalid.push({ key: parsed.key, reason: parsed.reason, raw });
      return;
    }
    const json = JSON.stringify(raw) ?? 'undefined';
    valid.push({ call: parsed.call, raw, json, fp: fingerprintJson(json), time: callTime(parsed.call) });
  });
  return { valid, invalid };
}

export interface PlanContext {
  appId: string;
  region: string;
  /** Unix seconds of this sync. */
  now: number;
  detailFetch: 'auto' | 'always';
  /** A backfill's [since, until): entries outside it are left alone. */
  window?: { since?: number | undefined; until?: number | undefined } | undefined;
  /** What is stored of this page's calls (by sessionId). */
  stored: ReadonlyMap<string, StoredCallState>;
  /** The calls this run already handled, with the fingerprint they were handled with (updated here). */
  recent: RecentCalls;
  /** This page's number in the run (every listing pass counted on): recorded in `recent` with each call decided here. */
  page?: number;
  /** Calls stored live before this run. */
  liveBefore: ReadonlySet<string>;
  /** `sync --refetch`: every entry in the window gets Get Call, changed or not. */
  refetch?: boolean;
  /** Whether complete-looking entries with media are trusted, audited or fetched (detailFetch auto). */
  audit?: ListAudit | undefined;
  /**
   * Unix seconds: a call stored as not found that the listing still shows, and this recent, is
   * fetched again although its entry is unchanged (settleDays). Get Call behind the listing (a
   * lagging replica) answered not found for the newest calls, and they kept no details for good,
   * ok, also after `sync --full` (found by a hostile fake).
   */
  recheckNotFoundSince?: number | undefined;
}

export interface PagePlan {
  /** Complete final entries, stored as listed. */
  listRows: CallRows[];
  /** Entries whose details Get Call must supply. */
  pending: Pending[];
  /** Calls this run had not listed before. */
  newlySeen: number;
  /** Entries within the window (a backfill's), whatever was decided for them. */
  inRange: ListedEntry[];
  /** Live calls (stored live, or listed live) the listing showed with a new or changed entry (decided on this page). */
  live: string[];
  /** Groups that received a group call on this page. */
  groups: string[];
}

function inWindow(e: ListedEntry, w: PlanContext['window']): boolean {
  if (!w) return true;
  return e.time !== null && (w.since === undefined || e.time >= w.since) && (w.until === undefined || e.time < w.until);
}

/**
 * Decides, per list entry: skip (handled earlier in this run with the same entry, or stored with
 * the same list fingerprint), store from the list (detailFetch auto and the entry is whole), or
 * fetch with Get Call. Pure but for `ctx.recent`, which it updates.
 */
export function planPage(valid: readonly ListedEntry[], ctx: PlanContext): PagePlan {
  const plan: PagePlan = { listRows: [], pending: [], newlySeen: 0, inRange: [], live: [], groups: [] };
  for (const v of valid) {
    if (!inWindow(v, ctx.window)) continue;
    plan.inRange.push(v);
    const id = v.call.sessionId;
    const before = ctx.recent.get(id);
    if (before === v.fp) continue; // already handled in this run, unchanged
    if (before === undefined) plan.newlySeen++;
    ctx.recent.set(id, v.fp, ctx.page);
    const live = ctx.liveBefore.has(id) || !isFinalCall(v.call);
    const guid = isGroupReceiver(v.call.receiverType) ? receiverOf(v.call) : null;
    if (guid) plan.groups.push(guid);
    const st = ctx.stored.get(id);
    const recheck = st?.notFound === true && ctx.recheckNotFoundSince !== undefined && (callTime(v.call) ?? 0) >= ctx.recheckNotFoundSince;
    // Unchanged since the last sync, unless this run listed the call already with another entry:
    // then the stored entry may be this one while the other, just planned, is older (a hostile fake
    // listing a stale copy first flipped calls back to it on every other run).
    // Live and unchanged: the live follow-up need not ask again when the entry states the minutes
    // (they grow while the call goes on, and the entry with them). One without them does not change,
    // and the previous run's minutes and participants stayed, ok (probe69): left to the follow-up.
    const unchanged = !ctx.refetch && st !== undefined && st.listFingerprint === v.fp && !recheck && before === undefined;
    if (live && (!unchanged || statesMinutes(v.call))) plan.live.push(id);
    if (unchanged) continue;
    // Listed twice in this run with different entries (a call listed once per participant, each
    // with some of them; or a call that changed while paging): never last-one-wins, Get Call
    // answers the whole call. What was decided for the earlier entry on this page is dropped: both
    // written, the later write won by timing (writes of earlier pages are dropped when written, see
    // supersededOn).
    const relisted = before !== undefined;
    if (relisted) withdraw(plan, id, ctx.audit);
    const route = !ctx.refetch && !relisted && !recheck && ctx.detailFetch === 'auto' && listEntryIsComplete(v.call) ? (ctx.audit?.route(v.call, v.fp) ?? 'list') : 'get';
    if (route === 'list') {
      plan.listRows.push(apiCallToRows(v.call, v.raw, { appId: ctx.appId, region: ctx.region, now: ctx.now, source: 'list', listFingerprint: v.fp, rawJson: v.json }));
    } else {
      plan.pending.push({ call: v.call, json: v.json, listFingerprint: v.fp, live, stored: st !== undefined, ...(route === 'audit' ? { audit: true } : {}), ...(relisted && before !== UNREADABLE ? { relisted } : {}), ...(st?.notFound === true ? { notFoundBefore: true, ...(st.listFingerprint === v.fp ? { sameEntry: true } : {}) } : {}) });
    }
  }
  return plan;
}

/** Whether an entry states the call's minutes and each participant's (what grows while a call goes on). */
function statesMinutes(call: ApiCall): boolean {
  return call.totalAudioMinutes != null && call.totalVideoMinutes != null && Array.isArray(call.participants)
    && call.participants.every((p) => p.totalAudioMinutes != null && p.totalVideoMinutes != null);
}

/** Drops what this page decided for a call listed again on it (rare: scanned only then). */
function withdraw(plan: PagePlan, id: string, audit: ListAudit | undefined): void {
  const row = plan.listRows.findIndex((r) => r.call.session_id === id);
  if (row >= 0) plan.listRows.splice(row, 1);
  const p = plan.pending.findIndex((x) => x.call.sessionId === id);
  if (p < 0) return;
  // An audit never asked is not done: its budget goes to a later entry.
  if (plan.pending[p]!.audit) audit?.unanswered(plan.pending[p]!.call);
  plan.pending.splice(p, 1);
}
