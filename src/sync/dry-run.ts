import pLimit from 'p-limit';
import type { AppSettings, Settings } from '../config/load.js';
import { redact } from '../config/secret.js';
import { CallsApi } from '../source/calls-api.js';
import { ApiError, namesApp } from '../source/errors.js';
import { AppHttpClient } from '../source/http-client.js';
import type { ListingOrder } from '../source/listing-evidence.js';
import { CallListing } from '../source/paginate-calls.js';
import { RequestPacer } from '../source/request-pacer.js';
import { hasStoredCalls, listCallsStoredFromList, listLiveCalls, loadCallStates, type StoredCallState } from '../store/calls-repo.js';
import { listUnsettledCalls } from '../store/settle-repo.js';
import { listRetries } from '../store/retries-repo.js';
import { getSyncState } from '../store/runs-repo.js';
import { unixSeconds } from '../config/clock.js';
import { receiverOf } from '../transform/call-rows.js';
import { isGroupReceiver } from '../transform/call-status.js';
import { AUDIT_AFTER_SECONDS, SettleAudit } from './settle-audit.js';
import { callsToDrawAgain } from './follow-ups.js';
import { ListAudit } from './list-audit.js';
import { parseListPage, planPage, unreadableEntries } from './page-planner.js';
import { RecentCalls } from './recent-calls.js';
import { syncModeFor } from './sync-mode.js';
import { retryTo, type SyncDeps } from './sync-app.js';
import type { AppRetryEvent, SyncMode } from './sync-result.js';

/** As in syncApp: the planner then skips and counts repeats exactly as the sync would. */
const RECENT_CALLS = 10_000;

export interface DryRunOptions {
  full?: boolean;
  since?: number;
  until?: number;
  refetch?: boolean;
  appIds?: readonly string[];
  signal?: AbortSignal;
  onRetry?: (e: AppRetryEvent) => void;
}

/** What a sync of one app would do, found with List Calls requests only. */
export interface DryRunResult {
  appId: string;
  region: string;
  mode: SyncMode;
  /** ok: listed and proved whole (or the incremental window listed); incomplete: not proved; failed: could not list. */
  status: 'ok' | 'incomplete' | 'failed';
  pages: number;
  /** Distinct calls the listing showed (within a backfill's window). */
  listed: number;
  /** Not stored yet / stored with another list entry / stored with this very entry (no write, no request). */
  new: number;
  changed: number;
  unchanged: number;
  /** Entries that do not parse: a sync stores them as rejects. */
  invalid: number;
  /** Get Call requests the sync would make for listed calls (entries the list cannot complete). */
  getCalls: number;
  /** At most this many more after the listing: live calls not listed, the retry list, unsettled calls, the settle audit's. */
  followUpGetCalls: number;
  /** Groups called in the listed window, whose members a sync would list: at least these (see groupsUnnamed). */
  groups: number;
  /**
   * Listed calls whose entry does not say who the call went to: a sync learns from Get Call whether
   * they were group calls, and lists those groups' members too, so `groups` is then a lower bound.
   */
  groupsUnnamed: number;
  listingComplete: boolean;
  /** An incremental listing stopped at the watermark's window (as a sync does); the sync then proves the window. */
  stoppedAtWindow: boolean;
  /** Why the listing could not be proved whole, or what is left to the real sync's proof. */
  listingNote?: string;
  listingOrder?: ListingOrder;
  reportedTotal?: number | undefined;
  requests: number;
  retries: number;
  error?: string;
}

/**
 * `sync --dry-run`: lists every app's calls as a sync would (same listing, same page planner, same
 * stored state), and counts what it would write and fetch. Only List Calls is requested; the
 * database is only read (the caller opens it read-only), so no lease is taken and no run recorded.
 */
export async function dryRun(deps: SyncDeps, settings: Settings, opts: DryRunOptions = {}): Promise<DryRunResult[]> {
  const apps = opts.appIds?.length ? settings.apps.filter((a) => opts.appIds!.includes(a.appId)) : settings.apps;
  const limit = pLimit(4);
  return Promise.all(apps.map((app) => limit(() => dryRunApp(deps, settings, app, opts))));
}

async function dryRunApp(deps: SyncDeps, settings: Settings, app: AppSettings, opts: DryRunOptions): Promise<DryRunResult> {
  const { db, clock } = deps;
  const state = await getSyncState(db, app.appId, app.region);
  const backfill = opts.since !== undefined || opts.until !== undefined;
  const { mode } = syncModeFor(state, { full: opts.full, backfill }, unixSeconds(clock), settings.fullSyncEveryDays);
  const r: DryRunResult = { appId: app.appId, region: app.region, mode, status: 'ok', pages: 0, listed: 0, new: 0, changed: 0, unchanged: 0, invalid: 0, getCalls: 0, followUpGetCalls: 0, groups: 0, groupsUnnamed: 0, listingComplete: false, stoppedAtWindow: false, requests: 0, retries: 0 };
  let client: AppHttpClient | undefined;
  try {
    if (!app.apiKey) throw new ApiError(`environment variable ${app.apiKeyEnv} is not set; export the app's REST API key (fullAccess) in it`, 'auth', undefined, undefined, 0);
    client = new AppHttpClient({
      appId: app.appId, region: app.region, apiKey: app.apiKey, dispatcher: deps.dispatcher,
      pacer: new RequestPacer(app.requestsPerMinute, clock), clock,
      timeoutMs: settings.requestTimeoutMs, maxAttempts: settings.maxAttempts, retryBaseMs: settings.retryBaseMs, maxResponseBytes: settings.maxResponseBytes,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onRetry ? { onRetry: retryTo(opts.onRetry, app) } : {}),
    });
    const cutoff = mode === 'incremental' ? state!.watermark_started_at! - settings.lookbackHours * 3600 : undefined;
    const lowerBound = cutoff ?? (backfill ? opts.since : undefined);
    const liveBefore = backfill ? new Set<string>() : new Set(await listLiveCalls(db, app.appId, app.region));
    const anyStored = await hasStoredCalls(db, app.appId);
    const recent = new RecentCalls(RECENT_CALLS);
    const counted = new Set<string>();
    const asked = new Set<string>();
    const listedLive = new Set<string>();
    const groups = new Set<string>();
    let readable = 0;
    // As the sync plans: the list audit's Gets (and, once entries are known to leave media out,
    // every entry with media fetched; once they are known to differ from Get Call, every entry), and
    // listed not-found calls asked again.
    const audit = settings.detailFetch === 'auto' ? await ListAudit.load(db, app.appId, app.region) : undefined;
    const recheckNotFoundSince = Number.NEGATIVE_INFINITY;
    const listing = new CallListing(new CallsApi(client, app.callsBaseUrl), settings.pageSize, { maxPages: settings.maxPagesPerRun, ...(lowerBound !== undefined ? { lowerBound } : {}) });
    for await (const page of listing.pages()) {
      if (opts.signal?.aborted) throw new ApiError('stopped by a signal', 'aborted', undefined, undefined, 0);
      r.pages++;
      const parsed = parseListPage(page.entries, page.page);
      r.invalid += parsed.invalid.length;
      readable += parsed.valid.length;
      const stored: ReadonlyMap<string, StoredCallState> = anyStored ? await loadCallStates(db, app.appId, parsed.valid.map((v) => v.call.sessionId)) : new Map();
      const plan = planPage(parsed.valid, {
        appId: app.appId, region: app.region, now: unixSeconds(clock), detailFetch: settings.detailFetch,
        window: backfill ? { since: opts.since, until: opts.until } : undefined, stored, recent, liveBefore, refetch: opts.refetch === true, audit, recheckNotFoundSince,
      });
      for (const v of plan.inRange) {
        const id = v.call.sessionId;
        if (counted.has(id)) continue;
        counted.add(id);
        const st = stored.get(id);
        if (v.call.receiverType == null || (isGroupReceiver(v.call.receiverType) && receiverOf(v.call) == null)) r.groupsUnnamed++;
        if (!st) r.new++;
        else if (st.listFingerprint === v.fp) r.unchanged++;
        else r.changed++;
      }
      plan.pending.push(...unreadableEntries(parsed.invalid, recent).pending);
      for (const p of plan.pending) asked.add(p.call.sessionId);
      r.getCalls += plan.pending.length;
      for (const id of plan.live) listedLive.add(id);
      for (const g of plan.groups) groups.add(g);
    }
    r.listed = counted.size;
    r.groups = groups.size;
    const outcome = listing.outcome();
    r.listingOrder = outcome.order;
    r.reportedTotal = outcome.reportedTotal;
    r.listingComplete = outcome.complete || (outcome.stoppedEarly && outcome.problem === undefined);
    r.stoppedAtWindow = outcome.stoppedEarly;
    if (outcome.stoppedEarly && outcome.problem === undefined) r.listingNote = 'stopped at the incremental window; the sync proves the window against the database and lists everything once if it does not add up';
    else if (outcome.stoppedEarly && !backfill) {
      r.status = 'incomplete';
      r.listingNote = `${outcome.problem}: a sync would list everything once`;
    } else if (!outcome.complete) {
      r.status = 'incomplete';
      r.listingNote = `${outcome.problem ?? 'the listing could not be proved complete'}: a sync would end partial and keep the watermark`;
    }
    if (readable === 0 && r.invalid > 0 && r.status === 'ok') {
      r.status = 'incomplete';
      r.listingNote = `none of the ${r.invalid} entries List Calls showed could be read: a sync would keep them aside and end partial`;
    }
    if (!backfill) {
      const now = unixSeconds(clock);
      const more = new Set<string>();
      for (const id of await listLiveCalls(db, app.appId, app.region)) if (!listedLive.has(id)) more.add(id);
      for (const x of await listRetries(db, app.appId, app.region)) more.add(x.sessionId);
      for (const id of await listUnsettledCalls(db, app.appId, app.region, now - settings.settleDays * 86_400)) more.add(id);
      if (audit?.refetchListed !== undefined) for (const id of await listCallsStoredFromList(db, app.appId, app.region, audit.refetchListed)) more.add(id);
      // The settle audit's sample, or every fetched call of the settle window once details are known to change.
      const settle = await SettleAudit.load(db, app.appId, app.region);
      const writtenBefore = settle.refetchAll ? now : now - AUDIT_AFTER_SECONDS;
      for (const id of (await settle.candidates(db, app.appId, app.region, { since: now - settings.settleDays * 86_400, writtenBefore, skip: (id) => more.has(id) })).keys()) more.add(id);
      for (const id of (await settle.oldCandidates(db, app.appId, app.region, { until: now - settings.settleDays * 86_400, writtenBefore: now - AUDIT_AFTER_SECONDS, skip: (id) => more.has(id) })).keys()) more.add(id);
      // Calls stored from their entries compared with it again (see followUpFetches): the spread
      // audits the listing ended before, and a draw among those earlier runs stored.
      if (audit && audit.refetchListed !== 'all') {
        const drawn = await callsToDrawAgain(db, app.appId, app.region, { unreached: audit.unreachedDraws(), writtenBefore: now - AUDIT_AFTER_SECONDS, skip: (id) => more.has(id) || asked.has(id) });
        for (const c of drawn) more.add(c.sessionId);
      }
      for (const id of asked) more.delete(id);
      r.followUpGetCalls = more.size;
    }
  } catch (err) {
    r.status = 'failed';
    const msg = (err as Error).message;
    r.error = redact(namesApp(err, app.appId) ? msg : `app ${app.appId} (${app.region}): ${msg}`, app.apiKey ? [app.apiKey] : []);
  } finally {
    if (client) {
      r.requests = client.counters.requests;
      r.retries = client.counters.retries;
    }
  }
  return r;
}
