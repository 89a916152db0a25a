import { setMaxListeners } from 'node:events';
import type { Kysely } from 'kysely';
import pLimit from 'p-limit';
import type { Dispatcher } from 'undici';
import type { AppSettings, Settings } from '../config/load.js';
import { CallsyncError } from '../config/errors.js';
import { redact } from '../config/secret.js';
import { CallsApi } from '../source/calls-api.js';
import { ChatApi } from '../source/chat-api.js';
import { ApiError, namesApp } from '../source/errors.js';
import { AppHttpClient, type RetryEvent } from '../source/http-client.js';
import { CallListing, type ListingOutcome } from '../source/paginate-calls.js';
import { RequestPacer } from '../source/request-pacer.js';
import { hasStoredCalls, loadCallStates, listLiveCalls, POSITION_KEY_PREFIX, type StoredCallState } from '../store/calls-repo.js';
import { listRetries } from '../store/retries-repo.js';
import { failedGroups } from '../store/groups-repo.js';
import { loadStoredPayload, recentStoredAnswers } from '../store/settle-repo.js';
import { getSyncState, markRejectsUnlisted, saveSyncState, startRun, updateRun, type RejectedKey } from '../store/runs-repo.js';
import type { Database } from '../store/schema.js';
import type { Logger } from '../log/logger.js';
import { unixSeconds, type Clock } from '../config/clock.js';
import { DetailFetcher } from './detail-fetcher.js';
import { followUpFetches } from './follow-ups.js';
import { markCallsNoLongerListed, proveIncrementalWindow } from './incremental-proof.js';
import { MEDIA_HISTORY, MediaStatements } from './media-statements.js';
import { runProblems } from './run-problems.js';
import { parseListPage, planPage, unreadableEntries, type Pending } from './page-planner.js';
import { MAX_CALLS_PER_TRANSACTION, PageWriter, writeBatch, type RetryListView } from './page-writer.js';
import { ListAudit } from './list-audit.js';
import { previousAnswer, SettleAudit } from './settle-audit.js';
import { RecentCalls } from './recent-calls.js';
import { supersededOn } from './superseded.js';
import { syncModeFor } from './sync-mode.js';
import { syncGroupMembers } from './sync-groups.js';
import { emptyResult, type AppRetryEvent, type AppSyncResult, type SyncOptions } from './sync-result.js';
import { WatermarkTracker } from './watermark.js';
import { fingerprint } from '../transform/call-rows.js';

export type { AppProgress, AppRetryEvent, AppSyncResult, SyncMode, SyncOptions } from './sync-result.js';

/** The client's retry events, told as this app's. */
export function retryTo(onRetry: (e: AppRetryEvent) => void, app: { appId: string; region: string }): (e: RetryEvent) => void {
  return (e) => onRetry({ ...e, appId: app.appId, region: app.region });
}

export interface SyncDeps {
  readonly db: Kysely<Database>;
  readonly dispatcher: Dispatcher;
  readonly clock: Clock;
  readonly log: Logger;
}

/**
 * Listed calls whose detail fetches may be outstanding while listing goes on (at least
 * MIN_PAGES_IN_FLIGHT pages): deep enough that the Gets never wait for the listing, bounded so that
 * memory does not depend on the size of the listing.
 */
const MAX_CALLS_IN_FLIGHT = 1_000;
const MIN_PAGES_IN_FLIGHT = 2;
/**
 * Listed calls remembered with their fingerprint (see RecentCalls): larger than what can be listed
 * but not yet written (MAX_CALLS_IN_FLIGHT + MAX_CALLS_PER_TRANSACTION + a page).
 */
const RECENT_CALLS = 10_000;
/** Abort listeners one app may add to the run's signal: one per concurrent request and sleep. */
const SIGNAL_LISTENERS_PER_APP = 16;

const stopped = (): ApiError => new ApiError('stopped by a signal before the run completed; the next run resumes', 'aborted', undefined, undefined, 0);

/**
 * Syncs one app: lists calls (proving the listing complete, see CallListing), stores complete list
 * entries directly, fetches the rest with Get Call, and commits each page's calls (with
 * participants, recordings and rejects) in one transaction. Never throws: failures end up in the
 * result and in `sync_runs`. Its memory does not grow with the number of calls listed.
 *
 * The run is 'ok' only when what it listed is proved to be the whole listing (or, on an
 * incremental run, the whole window); otherwise it is 'partial' with one line naming what could
 * not be proved, and the watermark stays where it was.
 */
export async function syncApp(deps: SyncDeps, settings: Settings, app: AppSettings, opts: SyncOptions): Promise<AppSyncResult> {
  const { db, clock } = deps;
  const log = deps.log.child({ app: app.appId, region: app.region });
  const startedMs = clock.now();
  const state = await getSyncState(db, app.appId, app.region);
  const backfill = opts.since !== undefined || opts.until !== undefined;
  const { mode, fullDue } = syncModeFor(state, { full: opts.full, backfill }, unixSeconds(clock), settings.fullSyncEveryDays);
  if (fullDue) log.info({ lastFullSyncAt: state?.last_full_sync_at ?? null, fullSyncEveryDays: settings.fullSyncEveryDays }, 'a full listing is due (fullSyncEveryDays): this run lists everything');
  const runRowId = await startRun(db, { run_id: opts.runId, app_id: app.appId, region: app.region, mode, started_at: unixSeconds(clock) });
  const r = emptyResult(app.appId, app.region, mode);
  let http: AppHttpClient | undefined;
  let listing: ListingOutcome | undefined;
  let listingProblem: string | undefined;
  /** Declared here so that what its audits found is saved also when the run stops early (see catch). */
  let audit: ListAudit | undefined;
  let settle: SettleAudit | undefined;
  /** Saves what an audit found (and says it); a finding is a fact about the service whatever ends the run. */
  const saveFinding = async (a: ListAudit | SettleAudit | undefined): Promise<void> => {
    const found = a ? await a.save(db, app.appId, app.region) : undefined;
    if (found) log.warn({ reason: found.reason }, found.line);
  };

  try {
    if (!app.apiKey) {
      throw new ApiError(`app ${app.appId} (${app.region}): environment variable ${app.apiKeyEnv} is not set; export the app's REST API key (fullAccess) in it`, 'auth', undefined, undefined, 0, app.appId);
    }
    const client = new AppHttpClient({
      appId: app.appId, region: app.region, apiKey: app.apiKey, dispatcher: deps.dispatcher,
      pacer: new RequestPacer(app.requestsPerMinute, clock), clock,
      timeoutMs: settings.requestTimeoutMs, maxAttempts: settings.maxAttempts, retryBaseMs: settings.retryBaseMs,
      maxResponseBytes: settings.maxResponseBytes,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onRetry ? { onRetry: retryTo(opts.onRetry, app) } : {}),
    });
    http = client;
    const api = new CallsApi(client, app.callsBaseUrl);
    // Each concurrent request and pacing sleep listens on the run's signal; apps share it.
    if (opts.signal) setMaxListeners(SIGNAL_LISTENERS_PER_APP * Math.max(1, settings.concurrency), opts.signal);
    const cutoff = mode === 'incremental' ? state!.watermark_started_at! - settings.lookbackHours * 3600 : undefined;
    // A full sync recomputes the watermark from what it lists (a wrong one is not kept forever).
    const watermark = new WatermarkTracker(mode === 'incremental' || backfill ? (state?.watermark_started_at ?? null) : null, unixSeconds(clock), settings.maxClockSkewMinutes * 60);
    let listedTotal: number | undefined;
    const recent = new RecentCalls(RECENT_CALLS);
    /** Calls stored live before this run: the listing may show them; those it does not are fetched after it. */
    const liveBefore = backfill ? new Set<string>() : new Set(await listLiveCalls(db, app.appId, app.region));
    // Into an app with no stored call (a first sync), every listed call is new: no per-page lookup.
    const anyStored = await hasStoredCalls(db, app.appId);
    const nothingStored = new Map<string, StoredCallState>();
    const listedLive = new Set<string>();
    /** Groups that received a group call in the synced window: their membership is synced after the calls. */
    const groupsCalled = new Set<string>();
    /** Calls listed inside the incremental window, for the proof that the window was listed whole. */
    const listedInWindow = cutoff !== undefined ? new Set<string>() : undefined;

    // The app's retry list as this run leaves it (RetryListView); the app's lease keeps other runs off it.
    const retryList: RetryListView = { ids: new Set((await listRetries(db, app.appId, app.region)).map((x) => x.sessionId)), known: true };
    const progress = (): void => opts.onProgress?.({ appId: app.appId, region: app.region, pages: r.pages, callsSeen: r.callsSeen, detailFetches: r.detailFetches, listedTotal });
    const writer = new PageWriter(async (batch) => {
      const now = unixSeconds(clock);
      let rejected = 0;
      const started = performance.now();
      try {
        rejected = await db.transaction().execute((trx) => writeBatch(trx, app.appId, app.region, batch, retryList, now));
      } catch (err) {
        // The set may now say what the rolled-back transaction did: every later clear is sent.
        retryList.known = false;
        throw err;
      } finally {
        r.writeMs += performance.now() - started;
      }
      r.rejected += rejected;
      for (const w of batch) r.callsWritten += w.rows.length;
      progress();
    }, clock);
    // The follow-up passes may ask for live and retry-listed calls: the fetcher notes which of these
    // it already asked in this run (a small set, whatever the size of the listing).
    const watch = backfill ? new Set<string>() : new Set([...liveBefore, ...retryList.ids]);
    // Some complete-looking list entries are audited against Get Call (see ListAudit).
    audit = settings.detailFetch === 'auto' ? await ListAudit.load(db, app.appId, app.region) : undefined;
    // Calls fetched on earlier runs are audited against a new answer (see SettleAudit); not by a backfill.
    const runStartedAt = unixSeconds(clock);
    settle = backfill ? undefined : await SettleAudit.load(db, app.appId, app.region);
    // How the service states media, from what earlier runs stored, then from this run's statements.
    const media = new MediaStatements();
    for (const a of backfill ? [] : await recentStoredAnswers(db, app.appId, app.region, MEDIA_HISTORY)) media.see(previousAnswer(a.sessionId, a.rawJson));
    // Listed calls that Get Call says do not exist are asked for again by every listing that shows
    // them, whatever their age (see planPage): an older one, its entry unchanged, stayed marked gone
    // for good while every listing showed it, ok (probe77); one backdated (indexed late, so new to a
    // replica behind the listing) until the next full listing, ok (probe79: fuzz seed 7140). Denied,
    // one this recent whose entry is not whole keeps the run partial; an older one is taken as removed
    // (the listing still showing it): holding every such denial partial made every run of a service
    // whose listing keeps removed calls partial for good (faults.listing, the simulator's notFoundCalls),
    // and the two cannot be told apart on the wire.
    const recheckNotFoundSince = Number.NEGATIVE_INFINITY;
    const notFoundPartialSince = runStartedAt - settings.settleDays * 86_400;
    const fetcher = new DetailFetcher({
      api, limit: pLimit(settings.concurrency), appId: app.appId, region: app.region, runId: opts.runId, media,
      nowSeconds: () => unixSeconds(clock), log, counters: r, signal: opts.signal, watch, audit, settle,
      recheckNotFoundSince: notFoundPartialSince,
      storedAnswer: async (id) => {
        const stored = await loadStoredPayload(db, app.appId, app.region, id);
        const call = previousAnswer(id, stored?.rawJson);
        return call && { call, lackedDetails: stored?.detailError != null, fromList: stored?.source === 'list' };
      },
    });
    const fetchAndWrite = async (pending: Pending[]): Promise<void> => {
      const w = await fetcher.complete([], pending, [], (id) => listedLive.add(id));
      if (w.rows.length || w.notFoundIds.length || w.rejects.length || w.retries.length || w.cleared.length) writer.add(w);
    };

    /** How many entries the listings showed parsed, and the first that did not (see below). */
    let readable = 0;
    let unread: { key: string; reason: string } | undefined;
    /** Entries this run's listings showed that did not parse, by key and by payload (see markRejectsUnlisted). */
    const invalidSeen = { keys: new Set<string>(), fingerprints: new Set<string>() };
    /** Listed entries Get Call cannot be asked for (no usable sessionId), once each by their payload: a second pass lists them again. */
    const unaskableSeen = new Set<string>();
    /** Pages planned in this run, both listing passes counted (see supersededOn). */
    let pagesPlanned = 0;
    /** Reads one listing to its end (or the window's), writing as it goes; every page is written before it returns. */
    const consume = async (listingRun: CallListing): Promise<ListingOutcome> => {
      const inFlight: { calls: number; done: Promise<void> }[] = [];
      let inFlightCalls = 0;
      let listingError: { err: unknown } | undefined;
      try {
        for await (const page of listingRun.pages()) {
          if (fetcher.fatal || opts.signal?.aborted) break;
          r.pages++;
          listedTotal = page.pagination?.total ?? listedTotal;
          const parsed = parseListPage(page.entries, page.page);
          const rejects = parsed.invalid.map((e) => fetcher.rejected('list_calls', e.key, e.reason, e.raw));
          readable += parsed.valid.length;
          unread ??= parsed.invalid[0];
          for (const e of parsed.invalid) {
            invalidSeen.keys.add(e.key);
            invalidSeen.fingerprints.add(fingerprint(e.raw));
          }
          for (const v of parsed.valid) {
            watermark.see(v.call);
            media.see(v.call, 'list');
          }
          const window = backfill ? { since: opts.since, until: opts.until } : undefined;
          const ids = parsed.valid.map((v) => v.call.sessionId);
          const stored = anyStored ? await loadCallStates(db, app.appId, ids) : nothingStored;
          const seq = ++pagesPlanned;
          const plan = planPage(parsed.valid, { appId: app.appId, region: app.region, now: unixSeconds(clock), detailFetch: settings.detailFetch, window, stored, recent, page: seq, liveBefore, refetch: opts.refetch === true, audit, recheckNotFoundSince });
          const { pending: unreadable, unaskable } = unreadableEntries(parsed.invalid, recent, seq);
          plan.pending.push(...unreadable);
          for (const e of unaskable) unaskableSeen.add(fingerprint(e.raw));
          r.callsSeen += plan.newlySeen;
          r.callsFromList += plan.listRows.length;
          for (const id of plan.live) listedLive.add(id);
          for (const g of plan.groups) groupsCalled.add(g);
          if (listedInWindow) for (const id of [...ids, ...unreadable.map((p) => p.call.sessionId)]) listedInWindow.add(id);
          const calls = plan.listRows.length + plan.pending.length;
          const done = fetcher.complete(plan.listRows, plan.pending, rejects, (id) => listedLive.add(id)).then((all) => {
            const w = supersededOn(all, seq, (id) => recent.page(id));
            if (w.rows.length || w.rejects.length || w.notFoundIds.length || w.retries.length || w.cleared.length) writer.add(w);
            else progress();
          });
          inFlight.push({ calls, done });
          inFlightCalls += calls;
          while (inFlight.length >= MIN_PAGES_IN_FLIGHT && (inFlightCalls > MAX_CALLS_IN_FLIGHT || inFlight.length > MAX_CALLS_IN_FLIGHT / Math.max(1, settings.pageSize))) {
            const first = inFlight.shift()!;
            inFlightCalls -= first.calls;
            await first.done;
          }
          // The writer holds what is fetched and not yet written: when it falls behind, wait for it.
          if (writer.queued > MAX_CALLS_PER_TRANSACTION) await writer.flush();
          writer.throwIfFailed();
        }
      } catch (err) {
        listingError = { err };
      }
      // In-flight pages are always settled and written before going on, also when listing fails:
      // a page is written whole or not at all, and no write outlives the run.
      const settled = await Promise.allSettled(inFlight.map((p) => p.done));
      await writer.flush();
      if (listingError) throw listingError.err;
      for (const s of settled) if (s.status === 'rejected') throw s.reason;
      writer.throwIfFailed();
      return listingRun.outcome();
    };

    const lowerBound = cutoff ?? (backfill ? opts.since : undefined);
    let listingRun = new CallListing(api, settings.pageSize, { maxPages: settings.maxPagesPerRun, ...(lowerBound !== undefined ? { lowerBound } : {}) });
    listing = await consume(listingRun);
    if (opts.signal?.aborted) throw stopped();

    if (!fetcher.fatal && listing.stoppedEarly && cutoff !== undefined && listedInWindow) {
      // An incremental run read only the window: prove it, and re-list everything once when the
      // evidence says calls were missed (also when the listing could not prove the window itself:
      // a second pass over it found calls the first missed).
      const proof = listing.problem !== undefined ? { relist: listing.problem } : await proveIncrementalWindow({ db, appId: app.appId, region: app.region, cutoff, listedInWindow, reportedTotal: listing.reportedTotal, fetchAndWrite, flush: () => writer.flush() });
      writer.throwIfFailed();
      if (proof.relist) {
        log.warn({ reason: proof.relist }, 'the incremental listing did not add up; listing everything once');
        const first = listing;
        listingRun = new CallListing(api, settings.pageSize, { maxPages: Math.max(1, settings.maxPagesPerRun - first.pages) });
        listing = await consume(listingRun);
        listing = { ...listing, pages: listing.pages + first.pages, relisted: true };
        if (!listing.complete) listingProblem = `${listing.problem ?? 'the listing could not be proved complete'} after ${proof.relist}`;
      }
    } else if (!fetcher.fatal && !listing.complete && (!listing.stoppedEarly || (backfill && listing.problem !== undefined))) {
      // A backfill's window has no count to prove it by: only what its listing showed (see CallListing).
      listingProblem = listing.problem ?? 'the listing could not be proved complete';
    }
    if (opts.signal?.aborted) throw stopped();
    // Not one entry could be read: not bad records but a format callsync does not read (a hostile
    // fake spelling session_id: 0 of 120 calls stored, the listing proved, ok).
    if (!fetcher.fatal && readable === 0 && unread && r.callsWritten === 0) {
      listingProblem ??= `none of the ${listing.distinct} entries List Calls showed could be read (first: ${unread.key.slice(0, 80)}: ${unread.reason.slice(0, 200)}); they are kept aside in rejected_records`;
    }

    if (!fetcher.fatal && !backfill && listing.complete && !listing.stoppedEarly && listingProblem === undefined) {
      const gone = await markCallsNoLongerListed(db, app.appId, app.region, listingRun, unixSeconds(clock));
      if (gone > 0) log.info({ calls: gone }, 'stored calls the complete listing no longer shows are marked not found (kept)');
      // Still listed: filed from (or with the key or payload of) an entry this run's listings showed (keys are filed cut short).
      const stillListed = (x: RejectedKey): boolean => listingRun.listed(x.record_key) || invalidSeen.keys.has(x.record_key) || invalidSeen.fingerprints.has(x.fingerprint) || (!x.record_key.startsWith(POSITION_KEY_PREFIX) && recent.get(x.record_key) !== undefined);
      const unlisted = await markRejectsUnlisted(db, app.appId, app.region, stillListed, unixSeconds(clock));
      if (unlisted > 0) log.info({ records: unlisted }, 'rejected entries the complete listing no longer shows no longer count as calls the service holds (kept, unlisted_at)');
    }
    await saveFinding(audit);
    // Live calls the listing did not show, the retry list, calls that look unsettled, and calls
    // stored from list entries once such entries are known to leave media out or to differ.
    if (!fetcher.fatal && !backfill) {
      r.auditedAgain = (await followUpFetches({
        db, appId: app.appId, region: app.region, now: unixSeconds(clock), liveMaxDays: settings.liveMaxDays, settleDays: settings.settleDays,
        listedLive, fetched: fetcher.fetched, fetchAndWrite, refetchListed: () => audit?.refetchListed, runStartedAt, settle, auditListed: audit && { unreached: audit.unreachedDraws() }, stopped: () => fetcher.fatal !== undefined || opts.signal?.aborted === true,
      })).listedAudited;
      await writer.flush();
      writer.throwIfFailed();
      await saveFinding(audit);
      await saveFinding(settle);
    }

    if (fetcher.fatal) throw fetcher.fatal;
    if (opts.signal?.aborted) throw stopped();

    for (const g of fetcher.groups) groupsCalled.add(g);
    // Groups an earlier run could not sync (partial, "retried on the next run"), whatever this run listed.
    if (!backfill) for (const g of await failedGroups(db, app.appId, app.region)) groupsCalled.add(g);
    const groups = await syncGroupMembers({ db, nowSeconds: () => unixSeconds(clock), runId: opts.runId, region: app.region, maxMembers: settings.maxMembersPerGroup }, new ChatApi(client, app.chatBaseUrl), app.appId, [...groupsCalled].sort());
    if (groups.pageSizeRefused) log.warn({ refused: groups.pageSizeRefused.refusal }, groups.pageSizeRefused.line);
    // A signal while members were listed fails each group left (`not sent: stopping`): that is the
    // signal, not the groups, and a run stopped by it is interrupted (exit 5), not a partial run
    // that counted as the app's last success (the failed groups are retried on the next run).
    if (opts.signal?.aborted) throw stopped();
    r.groupsSynced = groups.groups;
    r.membersSynced = groups.members;
    r.groupsNotFound = groups.notFound;
    r.rejected += groups.rejected;

    for (const f of watermark.future.slice(0, 3)) {
      log.warn({ sessionId: f.sessionId, startedAt: f.startedAt }, 'a call starts in the future (beyond now + maxClockSkewMinutes); it is stored but does not move the watermark');
    }
    r.unreadCalls += unaskableSeen.size;
    const problems = runProblems({
      listingProblem, result: r, unread, oldChange: settle?.oldChange, settleDays: settings.settleDays, nowSeconds: unixSeconds(clock), media: media.contradiction(), groups,
    });
    if (problems.length) {
      r.status = 'partial';
      r.error = `app ${app.appId} (${app.region}): ${problems.join('; ')}`;
    }
    // Calls lacking details do not hold the watermark back: the retry list remembers them.
    if (!listingProblem && !backfill) {
      const now = unixSeconds(clock);
      await saveSyncState(db, {
        app_id: app.appId, region: app.region, watermark_started_at: watermark.value, last_success_at: now,
        last_full_sync_at: mode === 'full' ? now : (state?.last_full_sync_at ?? null), updated_at: now,
      });
    }
  } catch (err) {
    // A finding of the audits is a fact about the service whatever ended the run: unsaved, the calls
    // this run stored from such entries were unchanged for the next run, which neither audited nor
    // fetched them, and ended ok with the entries' data (probe65 F1: SIGTERM after the last page).
    await saveFinding(audit).catch(() => undefined);
    await saveFinding(settle).catch(() => undefined);
    // A lost lease or app lock (the SQLite lease, the PostgreSQL lock's session: probe67 F1) stops the
    // run like a signal, but is a failure to say.
    const reason: unknown = opts.signal?.aborted ? opts.signal.reason : undefined;
    const lockLost = reason instanceof CallsyncError && reason.code === 'LEASE_LOST';
    r.status = opts.signal?.aborted && !lockLost ? 'interrupted' : 'failed';
    const msg = lockLost ? reason.message : (err as Error).message;
    r.error = redact(namesApp(err, app.appId) && !lockLost ? msg : `app ${app.appId} (${app.region}): ${msg}`, app.apiKey ? [app.apiKey] : []);
    if (r.status === 'interrupted') r.error = `app ${app.appId} (${app.region}): interrupted by a signal; pages already fetched were written, the next run resumes`;
    // Reported once, by the caller: the summary line (or `sync --json`) carries the error. A second
    // copy in the log put the same failure on the terminal twice; --log-level debug still shows it here.
    log.debug({ err: r.error, status: r.status }, r.status === 'interrupted' ? 'sync interrupted' : 'sync failed');
  } finally {
    if (http) {
      r.requests = http.counters.requests;
      r.requestsByKind = { ...http.counters.byKind };
      r.retries = http.counters.retries;
      r.rateLimited = http.counters.rateLimited;
    }
    if (listing) {
      r.listingOrder = listing.order;
      r.listedDistinct = listing.distinct;
      r.reportedTotal = listing.reportedTotal;
      r.listingComplete = listingProblem === undefined && (listing.complete || listing.stoppedEarly);
    }
    r.durationMs = clock.now() - startedMs;
    if (r.status === 'ok') {
      log.info({ mode, pages: r.pages, callsSeen: r.callsSeen, callsWritten: r.callsWritten, callsFromList: r.callsFromList, detailFetches: r.detailFetches, requests: r.requests, retries: r.retries, listingOrder: r.listingOrder, durationMs: r.durationMs, writeMs: Math.round(r.writeMs) }, 'app synced');
    }
    await updateRun(db, runRowId, {
      ended_at: unixSeconds(clock), status: r.status, pages: r.pages, calls_seen: r.callsSeen, calls_written: r.callsWritten,
      calls_from_list: r.callsFromList, detail_fetches: r.detailFetches, not_found: r.notFound, requests: r.requests,
      retries: r.retries, rate_limited: r.rateLimited, rejected: r.rejected, groups_synced: r.groupsSynced,
      members_synced: r.membersSynced, error: r.error ?? null,
      listing_order: r.listingOrder ?? null, listed_distinct: r.listedDistinct ?? null, reported_total: r.reportedTotal ?? null,
      listing_complete: r.listingComplete === undefined ? null : r.listingComplete ? 1 : 0,
    });
  }
  return r;
}
