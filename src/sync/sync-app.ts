import { setMaxListeners } from 'node:events';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import pLimit from 'p-limit';
import type { Dispatcher } from 'undici';
import type { AppSettings, Settings } from '../config/load.js';
import { redact } from '../config/secret.js';
import { CallsApi } from '../source/calls-api.js';
import { ChatApi } from '../source/chat-api.js';
import { ApiError } from '../source/errors.js';
import { AppHttpClient } from '../source/http-client.js';
import { paginateCalls } from '../source/paginate-calls.js';
import { RequestPacer } from '../source/request-pacer.js';
import type { ApiCall } from '../source/schemas.js';
import { hasStoredCalls, upsertCalls, loadCallStates, listLiveCalls, markNotFound, type StoredCallState } from '../store/calls-repo.js';
import { getSyncState, insertRejected, saveSyncState, startRun, updateRun } from '../store/runs-repo.js';
import type { Database, NewRejectedRow } from '../store/schema.js';
import { apiCallToRows, callTime, fingerprint, fingerprintJson, listEntryIsComplete, parseCall, receiverOf, type CallRows } from '../transform/call-rows.js';
import { isFinalStatus } from '../transform/call-status.js';
import type { Logger } from '../log/logger.js';
import { unixSeconds, type RuntimeClock } from './clock.js';
import { syncGroupMembers } from './sync-groups.js';

export interface SyncDeps {
  readonly db: Kysely<Database>;
  readonly dispatcher: Dispatcher;
  readonly clock: RuntimeClock;
  readonly log: Logger;
}

export interface SyncOptions {
  readonly runId: string;
  /** Ignore the watermark and list everything. */
  readonly full?: boolean;
  /** Backfill window (unix seconds, [since, until)); does not move the watermark. */
  readonly since?: number;
  readonly until?: number;
  /** Stops the sync between pages (SIGTERM): pages already fetched are written, the run is 'interrupted'. */
  readonly signal?: AbortSignal;
  /** Called after each page is written (progress displays). */
  readonly onProgress?: (p: AppProgress) => void;
}

export type SyncMode = 'full' | 'incremental' | 'backfill';

export interface AppProgress {
  appId: string;
  region: string;
  pages: number;
  callsSeen: number;
  detailFetches: number;
  /** Calls the listing says it holds (pagination.total of the latest page), when it says. */
  listedTotal: number | undefined;
}

export interface AppSyncResult {
  appId: string;
  region: string;
  mode: SyncMode;
  status: 'ok' | 'partial' | 'failed' | 'interrupted';
  pages: number;
  callsSeen: number;
  callsWritten: number;
  callsFromList: number;
  detailFetches: number;
  notFound: number;
  rejected: number;
  failedCalls: number;
  groupsSynced: number;
  membersSynced: number;
  groupsNotFound: number;
  requests: number;
  requestsByKind: Record<string, number>;
  retries: number;
  rateLimited: number;
  durationMs: number;
  /** Time spent inside write transactions (wall clock, ms): how much of the run the database took. */
  writeMs: number;
  error?: string;
}

/**
 * Listed calls whose detail fetches may be outstanding while listing goes on (at least
 * MIN_PAGES_IN_FLIGHT pages): deep enough that the Gets never wait for the listing, bounded so that
 * memory does not depend on the size of the listing.
 */
const MAX_CALLS_IN_FLIGHT = 1_000;
const MIN_PAGES_IN_FLIGHT = 2;
/**
 * Group commit: fetched pages are written together once this many calls are waiting, or after
 * MAX_WRITE_DELAY_MS, or when the listing ends. A commit (WAL append and, every ~4 MB, a checkpoint)
 * costs about as much as writing a hundred calls, so pages of 100 written one per transaction spent
 * half the write time committing. Each page still goes in whole, in one transaction.
 */
const MIN_CALLS_PER_TRANSACTION = 1_000;
const MAX_CALLS_PER_TRANSACTION = 5_000;
const MAX_WRITE_DELAY_MS = 250;
const LIVE_REFETCH_BATCH = 100;
/**
 * Listed calls remembered with their fingerprint, so that a call repeated on a later page (calls
 * inserted while paging push entries down; a step-back re-reads pages) is neither fetched nor
 * counted twice. Repeats come from the last few pages. The window is larger than what can be listed
 * but not yet written (MAX_CALLS_IN_FLIGHT + MAX_CALLS_PER_TRANSACTION + a page), so an older repeat
 * finds its stored fingerprint and costs nothing (on a first sync, at most one more write).
 * Bounded, so memory does not grow with history.
 */
const RECENT_CALLS = 10_000;
/** Abort listeners one app may add to the run's signal: one per concurrent request and sleep. */
const SIGNAL_LISTENERS_PER_APP = 16;

interface Pending {
  call: ApiCall;
  /** The list entry as JSON.stringify gave it (not the parsed object: a string is a third of its size); undefined when not listed. */
  json: string | undefined;
  listFingerprint: string | null;
}

interface PageWrite {
  rows: CallRows[];
  rejects: NewRejectedRow[];
  notFoundIds: string[];
}

function weight(w: PageWrite): number {
  return w.rows.length + w.rejects.length + w.notFoundIds.length;
}

/**
 * Writes fetched pages, several per transaction (see MIN_CALLS_PER_TRANSACTION), each page whole.
 * `commit` runs one transaction; its first failure is kept (`throwIfFailed`: the run then fails) and
 * the pages of that transaction are not written. Nothing stays queued after `flush()`.
 */
class PageWriter {
  readonly #queue: PageWrite[] = [];
  #queuedWeight = 0;
  #running: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #due = false;
  #failure: { err: unknown } | undefined;

  constructor(private readonly commit: (batch: readonly PageWrite[]) => Promise<void>) {}

  get queued(): number {
    return this.#queuedWeight;
  }

  /** Throws the first failed transaction's error, if any. */
  throwIfFailed(): void {
    if (this.#failure) throw this.#failure.err;
  }

  add(w: PageWrite): void {
    this.#queue.push(w);
    this.#queuedWeight += weight(w);
    this.#kick();
  }

  /** Writes everything queued now and resolves once it is written (or has failed). */
  async flush(): Promise<void> {
    this.#due = true;
    this.#kick();
    while (this.#running) await this.#running;
  }

  #kick(): void {
    if (this.#running || this.#queue.length === 0) return;
    if (this.#due || this.#queuedWeight >= MIN_CALLS_PER_TRANSACTION) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#running = this.#drain().finally(() => {
        this.#running = undefined;
        this.#kick();
      });
    } else {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        this.#due = true;
        this.#kick();
      }, MAX_WRITE_DELAY_MS);
    }
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0 && (this.#due || this.#queuedWeight >= MIN_CALLS_PER_TRANSACTION)) {
      let take = 0;
      let n = 0;
      while (take < this.#queue.length && (take === 0 || n + weight(this.#queue[take]!) <= MAX_CALLS_PER_TRANSACTION)) n += weight(this.#queue[take++]!);
      const batch = this.#queue.splice(0, take);
      this.#queuedWeight -= n;
      try {
        await this.commit(batch);
      } catch (err) {
        this.#failure ??= { err };
      }
      // Let the responses that arrived meanwhile be read, and new requests go out.
      await yieldToEventLoop();
    }
    if (this.#queue.length === 0) this.#due = false;
  }
}

/**
 * The calls listed in this run, newest pages last, with the fingerprint each was handled with; only
 * the last `capacity` listed calls are kept (see RECENT_CALLS).
 */
class RecentCalls {
  readonly #fp = new Map<string, string>();
  readonly #order: string[] = [];
  #head = 0;

  constructor(private readonly capacity: number) {}

  get(id: string): string | undefined {
    return this.#fp.get(id);
  }

  set(id: string, fp: string): void {
    if (!this.#fp.has(id)) {
      this.#order.push(id);
      if (this.#order.length - this.#head > this.capacity) this.#fp.delete(this.#order[this.#head++]!);
      if (this.#head > this.capacity) {
        this.#order.splice(0, this.#head);
        this.#head = 0;
      }
    }
    this.#fp.set(id, fp);
  }
}

/**
 * Syncs one app: lists calls newest first, stores complete list entries directly, fetches the
 * rest with Get Call, and commits each page's calls (with participants, recordings and rejects) in
 * one transaction (pages that finish close together share one). Never throws: failures end up in
 * the result and in `sync_runs`. Its memory does not grow with the number of calls listed.
 */
export async function syncApp(deps: SyncDeps, settings: Settings, app: AppSettings, opts: SyncOptions): Promise<AppSyncResult> {
  const { db, clock } = deps;
  const log = deps.log.child({ app: app.appId, region: app.region });
  const startedMs = clock.now();
  const state = await getSyncState(db, app.appId, app.region);
  const backfill = opts.since !== undefined || opts.until !== undefined;
  const mode: SyncMode = backfill ? 'backfill' : opts.full || state?.watermark_started_at == null ? 'full' : 'incremental';
  const runRowId = await startRun(db, { run_id: opts.runId, app_id: app.appId, region: app.region, mode, started_at: unixSeconds(clock) });
  const r: AppSyncResult = {
    appId: app.appId, region: app.region, mode, status: 'ok', pages: 0, callsSeen: 0, callsWritten: 0, callsFromList: 0,
    detailFetches: 0, notFound: 0, rejected: 0, failedCalls: 0, groupsSynced: 0, membersSynced: 0, groupsNotFound: 0, requests: 0, requestsByKind: {}, retries: 0, rateLimited: 0, durationMs: 0, writeMs: 0,
  };
  let http: AppHttpClient | undefined;
  let fatal: string | undefined;

  try {
    if (!app.apiKey) {
      throw new ApiError(`app ${app.appId} (${app.region}): environment variable ${app.apiKeyEnv} is not set; export the app's REST API key (fullAccess) in it`, 'auth', undefined, undefined, 0);
    }
    const client = new AppHttpClient({
      appId: app.appId, region: app.region, apiKey: app.apiKey, dispatcher: deps.dispatcher,
      pacer: new RequestPacer(app.requestsPerMinute, clock), clock,
      timeoutMs: settings.requestTimeoutMs, maxAttempts: settings.maxAttempts, retryBaseMs: settings.retryBaseMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    http = client;
    const api = new CallsApi(client, app.callsBaseUrl);
    const limit = pLimit(settings.concurrency);
    // Each concurrent request and pacing sleep listens on the run's signal; apps share it.
    if (opts.signal) setMaxListeners(SIGNAL_LISTENERS_PER_APP * Math.max(1, settings.concurrency), opts.signal);
    const cutoff = mode === 'incremental' ? state!.watermark_started_at! - settings.lookbackHours * 3600 : undefined;
    let newestStarted = state?.watermark_started_at ?? null;
    let listedTotal: number | undefined;
    const recent = new RecentCalls(RECENT_CALLS);
    /** Calls stored live before this run: the listing may show them; those it does not are fetched after it. */
    const liveBefore = backfill ? new Set<string>() : new Set(await listLiveCalls(db, app.appId));
    // Into an app with no stored call (a first sync), every listed call is new: no per-page lookup.
    // A call this run already wrote and lists again is caught by `recent`.
    const anyStored = await hasStoredCalls(db, app.appId);
    const nothingStored = new Map<string, StoredCallState>();
    /** Live calls (stored live, or listed or fetched live) that this run's listing showed. */
    const listedLive = new Set<string>();
    /** Groups that received a group call in the synced window: their membership is synced after the calls. */
    const groupsCalled = new Set<string>();
    const inFlight: { calls: number; done: Promise<void> }[] = [];
    let inFlightCalls = 0;

    const progress = (): void => opts.onProgress?.({ appId: app.appId, region: app.region, pages: r.pages, callsSeen: r.callsSeen, detailFetches: r.detailFetches, listedTotal });
    const writer = new PageWriter(async (batch) => {
      const now = unixSeconds(clock);
      let rejected = 0;
      const started = performance.now();
      try {
        await db.transaction().execute(async (trx) => {
          for (const w of batch) {
            await upsertCalls(trx, w.rows);
            if (w.notFoundIds.length) await markNotFound(trx, app.appId, w.notFoundIds, now);
            if (w.rejects.length) rejected += await insertRejected(trx, w.rejects);
          }
        });
      } finally {
        r.writeMs += performance.now() - started;
      }
      r.rejected += rejected;
      for (const w of batch) r.callsWritten += w.rows.length;
      progress();
    });

    const reject = (rejects: NewRejectedRow[], endpoint: string, key: string, reason: string, raw: unknown): void => {
      const payload = (JSON.stringify(raw) ?? 'undefined').slice(0, 1_000_000);
      rejects.push({ app_id: app.appId, endpoint, record_key: key, reason, payload, fingerprint: fingerprint(raw), run_id: opts.runId, created_at: unixSeconds(clock) });
      log.warn({ endpoint, recordKey: key, reason }, 'record rejected');
    };

    /** Fetches details for `pending`, then hands them with `listRows` and `rejects` to the writer (one transaction). */
    const completePage = async (listRows: CallRows[], pending: Pending[], rejects: NewRejectedRow[]): Promise<void> => {
      const rows = listRows;
      const notFoundIds: string[] = [];
      r.detailFetches += pending.length;
      await Promise.all(
        pending.map((p) =>
          limit(async () => {
            if (fatal || opts.signal?.aborted) return;
            try {
              const got = await api.getCall(p.call.sessionId);
              const now = unixSeconds(clock);
              if (!got.found) {
                r.notFound++;
                // Keep what the listing said, flagged: the service no longer has this session.
                if (p.json !== undefined) rows.push(apiCallToRows(p.call, undefined, { appId: app.appId, region: app.region, now, source: 'list', listFingerprint: p.listFingerprint, notFoundAt: now, rawJson: p.json }));
                else notFoundIds.push(p.call.sessionId);
                return;
              }
              const json = JSON.stringify(got.raw) ?? 'undefined';
              // A Get body equal to the list entry (the usual case when the entry only lacked
              // nothing, or detailFetch is always) parses to the same call: it is not validated twice.
              const parsed = json === p.json ? ({ ok: true, call: p.call } as const) : parseCall(got.raw, p.call.sessionId);
              if (!parsed.ok) {
                reject(rejects, 'get_call', parsed.key, parsed.reason, got.raw);
                return;
              }
              const row = apiCallToRows(parsed.call, got.raw, { appId: app.appId, region: app.region, now, source: 'detail', listFingerprint: p.listFingerprint, rawJson: json });
              if (p.json !== undefined && row.call.is_final === 0) listedLive.add(p.call.sessionId);
              rows.push(row);
            } catch (err) {
              if (err instanceof ApiError && (err.kind === 'auth' || err.kind === 'account')) {
                fatal ??= err.message;
                return;
              }
              if (err instanceof ApiError && err.kind === 'aborted') return; // not written: the next run fetches it
              r.failedCalls++;
              log.warn({ sessionId: p.call.sessionId, err: (err as Error).message }, 'Get Call failed; the call is retried on the next run');
            }
          }),
        ),
      );
      if (rows.length || rejects.length || notFoundIds.length) writer.add({ rows, rejects, notFoundIds });
      else progress();
    };

    // In-flight pages are always settled and written before going on, also when listing fails: a
    // page is written whole or not at all, and no write outlives the run.
    let listingError: { err: unknown } | undefined;
    try {
      for await (const page of paginateCalls(api, settings.pageSize)) {
        if (fatal || opts.signal?.aborted) break;
        r.pages++;
        listedTotal = page.pagination?.total ?? listedTotal;
        const now = unixSeconds(clock);
        const rejects: NewRejectedRow[] = [];
        const valid: { call: ApiCall; raw: unknown; json: string; fp: string; time: number | null }[] = [];
        let oldest: number | undefined;
        let allOlder = true;
        const lowerBound = cutoff ?? (backfill ? opts.since : undefined);
        page.entries.forEach((raw, i) => {
          const parsed = parseCall(raw, `list:page${page.page}#${i}`);
          if (!parsed.ok) return reject(rejects, 'list_calls', parsed.key, parsed.reason, raw);
          const time = callTime(parsed.call);
          if (time !== null) {
            oldest = oldest === undefined || time < oldest ? time : oldest;
            if (lowerBound === undefined || time >= lowerBound) allOlder = false;
          }
          if (parsed.call.startedAt != null && (newestStarted === null || parsed.call.startedAt > newestStarted)) newestStarted = parsed.call.startedAt;
          // One serialisation serves the fingerprint and, when the entry is stored as is, raw_json.
          const json = JSON.stringify(raw) ?? 'undefined';
          valid.push({ call: parsed.call, raw, json, fp: fingerprintJson(json), time });
        });
        const inRange = backfill
          ? valid.filter((v) => v.time !== null && (opts.since === undefined || v.time >= opts.since) && (opts.until === undefined || v.time < opts.until))
          : valid;
        const stored = anyStored ? await loadCallStates(db, app.appId, inRange.map((v) => v.call.sessionId)) : nothingStored;
        const listRows: CallRows[] = [];
        const pending: Pending[] = [];
        for (const v of inRange) {
          const id = v.call.sessionId;
          const before = recent.get(id);
          if (before === v.fp) continue; // already handled in this run, unchanged
          if (before === undefined) r.callsSeen++;
          recent.set(id, v.fp);
          if (liveBefore.has(id) || !isFinalStatus(v.call.status)) listedLive.add(id);
          const guid = v.call.receiverType === 'group' ? receiverOf(v.call) : null;
          if (guid) groupsCalled.add(guid);
          const st = stored.get(id);
          if (st && st.listFingerprint === v.fp) continue; // unchanged since the last sync
          if (settings.detailFetch === 'auto' && listEntryIsComplete(v.call)) {
            listRows.push(apiCallToRows(v.call, v.raw, { appId: app.appId, region: app.region, now, source: 'list', listFingerprint: v.fp, rawJson: v.json }));
            r.callsFromList++;
          } else {
            pending.push({ call: v.call, json: v.json, listFingerprint: v.fp });
          }
        }
        const calls = listRows.length + pending.length;
        inFlight.push({ calls, done: completePage(listRows, pending, rejects) });
        inFlightCalls += calls;
        while (inFlight.length >= MIN_PAGES_IN_FLIGHT && (inFlightCalls > MAX_CALLS_IN_FLIGHT || inFlight.length > MAX_CALLS_IN_FLIGHT / Math.max(1, settings.pageSize))) {
          const first = inFlight.shift()!;
          inFlightCalls -= first.calls;
          await first.done;
        }
        // The writer holds what is fetched and not yet written: when it falls behind, wait for it.
        if (writer.queued > MAX_CALLS_PER_TRANSACTION) await writer.flush();
        writer.throwIfFailed();

        if (lowerBound !== undefined && oldest !== undefined && allOlder) break;
      }
    } catch (err) {
      listingError = { err };
    }
    const settled = await Promise.allSettled(inFlight.map((p) => p.done));
    await writer.flush();
    if (listingError) throw listingError.err;
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
    writer.throwIfFailed();

    if (opts.signal?.aborted) throw new ApiError('stopped by a signal before the run completed; the next run resumes', 'aborted', undefined, undefined, 0);

    // Live calls the listing no longer shows (older than the window): ask for each until it is final.
    if (!fatal && !backfill) {
      const live = (await listLiveCalls(db, app.appId)).filter((id) => !listedLive.has(id));
      for (let i = 0; i < live.length && !fatal; i += LIVE_REFETCH_BATCH) {
        const batch = live.slice(i, i + LIVE_REFETCH_BATCH).map((sessionId): Pending => ({ call: { sessionId } as ApiCall, json: undefined, listFingerprint: null }));
        await completePage([], batch, []);
      }
      await writer.flush();
      writer.throwIfFailed();
    }

    if (fatal) throw new Error(fatal);
    if (opts.signal?.aborted) throw new ApiError('stopped by a signal before the run completed; the next run resumes', 'aborted', undefined, undefined, 0);

    const groups = await syncGroupMembers({ db, nowSeconds: () => unixSeconds(clock), runId: opts.runId }, new ChatApi(client, app.chatBaseUrl), app.appId, [...groupsCalled].sort());
    r.groupsSynced = groups.groups;
    r.membersSynced = groups.members;
    r.groupsNotFound = groups.notFound;
    r.rejected += groups.rejected;

    const problems: string[] = [];
    if (r.failedCalls > 0) problems.push(`${r.failedCalls} call(s) could not be fetched; they are retried on the next run (the watermark was not moved)`);
    if (groups.failed.length > 0) problems.push(`members of ${groups.failed.length} group(s) could not be synced (${groups.failed[0]}${groups.failed.length > 1 ? ', …' : ''}); retried on the next run`);
    if (problems.length) {
      r.status = 'partial';
      r.error = problems.join('; ');
    }
    if (r.failedCalls === 0 && !backfill) {
      const now = unixSeconds(clock);
      await saveSyncState(db, {
        app_id: app.appId, region: app.region, watermark_started_at: newestStarted, last_success_at: now,
        last_full_sync_at: mode === 'full' ? now : (state?.last_full_sync_at ?? null), updated_at: now,
      });
    }
  } catch (err) {
    r.status = opts.signal?.aborted ? 'interrupted' : 'failed';
    const msg = (err as Error).message;
    r.error = redact(msg.startsWith(`app ${app.appId}`) ? msg : `app ${app.appId} (${app.region}): ${msg}`, app.apiKey ? [app.apiKey] : []);
    if (r.status === 'interrupted') r.error = `app ${app.appId} (${app.region}): interrupted by a signal; pages already fetched were written, the next run resumes`;
    log[r.status === 'interrupted' ? 'warn' : 'error']({ err: r.error }, r.status === 'interrupted' ? 'sync interrupted' : 'sync failed');
  } finally {
    if (http) {
      r.requests = http.counters.requests;
      r.requestsByKind = { ...http.counters.byKind };
      r.retries = http.counters.retries;
      r.rateLimited = http.counters.rateLimited;
    }
    r.durationMs = clock.now() - startedMs;
    if (r.status === 'ok') {
      log.info({ mode, pages: r.pages, callsSeen: r.callsSeen, callsWritten: r.callsWritten, callsFromList: r.callsFromList, detailFetches: r.detailFetches, requests: r.requests, retries: r.retries, durationMs: r.durationMs, writeMs: Math.round(r.writeMs) }, 'app synced');
    }
    await updateRun(db, runRowId, {
      ended_at: unixSeconds(clock), status: r.status, pages: r.pages, calls_seen: r.callsSeen, calls_written: r.callsWritten,
      calls_from_list: r.callsFromList, detail_fetches: r.detailFetches, not_found: r.notFound, requests: r.requests,
      retries: r.retries, rate_limited: r.rateLimited, rejected: r.rejected, groups_synced: r.groupsSynced,
      members_synced: r.membersSynced, error: r.error ?? null,
    });
  }
  return r;
}
