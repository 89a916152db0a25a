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
import { upsertCalls, loadCallStates, listLiveCalls, markNotFound } from '../store/calls-repo.js';
import { getSyncState, insertRejected, saveSyncState, startRun, updateRun } from '../store/runs-repo.js';
import type { Database, NewRejectedRow } from '../store/schema.js';
import { apiCallToRows, callTime, fingerprint, listEntryIsComplete, parseCall, receiverOf, type CallRows } from '../transform/call-rows.js';
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
  error?: string;
}

/** Pages whose detail fetches and writes may be outstanding while listing goes on. */
const MAX_PAGES_IN_FLIGHT = 4;
const LIVE_REFETCH_BATCH = 100;

interface Pending {
  call: ApiCall;
  raw: unknown;
  listFingerprint: string | null;
}

/**
 * Syncs one app: lists calls newest first, stores complete list entries directly, fetches the
 * rest with Get Call, and commits each page's calls (with participants, recordings and rejects) in
 * one transaction. Never throws: failures end up in the result and in `sync_runs`.
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
    detailFetches: 0, notFound: 0, rejected: 0, failedCalls: 0, groupsSynced: 0, membersSynced: 0, groupsNotFound: 0, requests: 0, requestsByKind: {}, retries: 0, rateLimited: 0, durationMs: 0,
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
    const cutoff = mode === 'incremental' ? state!.watermark_started_at! - settings.lookbackHours * 3600 : undefined;
    let newestStarted = state?.watermark_started_at ?? null;
    let listedTotal: number | undefined;
    /** Fingerprint of each call's entry as handled in this run: a call repeated on a later page
     * (calls inserted while paging push entries down) is not fetched twice. */
    const seen = new Map<string, string>();
    /** Groups that received a group call in the synced window: their membership is synced after the calls. */
    const groupsCalled = new Set<string>();
    const inFlight: Promise<void>[] = [];

    const writePage = async (rows: CallRows[], rejects: NewRejectedRow[], notFoundIds: string[]): Promise<void> => {
      const now = unixSeconds(clock);
      await db.transaction().execute(async (trx) => {
        await upsertCalls(trx, rows);
        if (notFoundIds.length) await markNotFound(trx, app.appId, notFoundIds, now);
        r.rejected += await insertRejected(trx, rejects);
      });
      r.callsWritten += rows.length;
    };

    const reject = (rejects: NewRejectedRow[], endpoint: string, key: string, reason: string, raw: unknown): void => {
      const payload = (JSON.stringify(raw) ?? 'undefined').slice(0, 1_000_000);
      rejects.push({ app_id: app.appId, endpoint, record_key: key, reason, payload, fingerprint: fingerprint(raw), run_id: opts.runId, created_at: unixSeconds(clock) });
      log.warn({ endpoint, recordKey: key, reason }, 'record rejected');
    };

    /** Fetches details for `pending`, then writes them with `listRows` and `rejects` in one transaction. */
    const completePage = async (listRows: CallRows[], pending: Pending[], rejects: NewRejectedRow[]): Promise<void> => {
      const rows = [...listRows];
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
                if (p.raw !== undefined) rows.push(apiCallToRows(p.call, p.raw, { appId: app.appId, region: app.region, now, source: 'list', listFingerprint: p.listFingerprint, notFoundAt: now }));
                else notFoundIds.push(p.call.sessionId);
                return;
              }
              const parsed = parseCall(got.raw, p.call.sessionId);
              if (!parsed.ok) {
                reject(rejects, 'get_call', parsed.key, parsed.reason, got.raw);
                return;
              }
              rows.push(apiCallToRows(parsed.call, got.raw, { appId: app.appId, region: app.region, now, source: 'detail', listFingerprint: p.listFingerprint }));
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
      await writePage(rows, rejects, notFoundIds);
      opts.onProgress?.({ appId: app.appId, region: app.region, pages: r.pages, callsSeen: r.callsSeen, detailFetches: r.detailFetches, listedTotal });
    };

    for await (const page of paginateCalls(api, settings.pageSize)) {
      if (fatal || opts.signal?.aborted) break;
      r.pages++;
      listedTotal = page.pagination?.total ?? listedTotal;
      const now = unixSeconds(clock);
      const rejects: NewRejectedRow[] = [];
      const valid: { call: ApiCall; raw: unknown; fp: string; time: number | null }[] = [];
      page.entries.forEach((raw, i) => {
        const parsed = parseCall(raw, `list:page${page.page}#${i}`);
        if (!parsed.ok) return reject(rejects, 'list_calls', parsed.key, parsed.reason, raw);
        const time = callTime(parsed.call);
        if (parsed.call.startedAt != null && (newestStarted === null || parsed.call.startedAt > newestStarted)) newestStarted = parsed.call.startedAt;
        valid.push({ call: parsed.call, raw, fp: fingerprint(raw), time });
      });
      const inRange = backfill
        ? valid.filter((v) => v.time !== null && (opts.since === undefined || v.time >= opts.since) && (opts.until === undefined || v.time < opts.until))
        : valid;
      const stored = await loadCallStates(db, app.appId, inRange.map((v) => v.call.sessionId));
      const listRows: CallRows[] = [];
      const pending: Pending[] = [];
      for (const v of inRange) {
        const id = v.call.sessionId;
        const before = seen.get(id);
        if (before === v.fp) continue; // already handled in this run, unchanged
        if (before === undefined) r.callsSeen++;
        seen.set(id, v.fp);
        const guid = v.call.receiverType === 'group' ? receiverOf(v.call) : null;
        if (guid) groupsCalled.add(guid);
        const st = stored.get(id);
        if (st && st.listFingerprint === v.fp) continue; // unchanged since the last sync
        if (settings.detailFetch === 'auto' && listEntryIsComplete(v.call)) {
          listRows.push(apiCallToRows(v.call, v.raw, { appId: app.appId, region: app.region, now, source: 'list', listFingerprint: v.fp }));
          r.callsFromList++;
        } else {
          pending.push({ call: v.call, raw: v.raw, listFingerprint: v.fp });
        }
      }
      inFlight.push(completePage(listRows, pending, rejects));
      if (inFlight.length >= MAX_PAGES_IN_FLIGHT) await inFlight.shift();

      const times = valid.map((v) => v.time).filter((t): t is number => t !== null);
      const oldest = times.length ? Math.min(...times) : undefined;
      const lowerBound = cutoff ?? (backfill ? opts.since : undefined);
      if (lowerBound !== undefined && oldest !== undefined && times.every((t) => t < lowerBound)) break;
    }
    await Promise.all(inFlight);

    if (opts.signal?.aborted) throw new ApiError('stopped by a signal before the run completed; the next run resumes', 'aborted', undefined, undefined, 0);

    // Live calls the listing no longer shows (older than the window): ask for each until it is final.
    if (!fatal && !backfill) {
      const live = (await listLiveCalls(db, app.appId)).filter((id) => !seen.has(id));
      for (let i = 0; i < live.length && !fatal; i += LIVE_REFETCH_BATCH) {
        const batch = live.slice(i, i + LIVE_REFETCH_BATCH).map((sessionId): Pending => ({ call: { sessionId } as ApiCall, raw: undefined, listFingerprint: null }));
        await completePage([], batch, []);
      }
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
      log.info({ mode, pages: r.pages, callsSeen: r.callsSeen, callsWritten: r.callsWritten, callsFromList: r.callsFromList, detailFetches: r.detailFetches, requests: r.requests, retries: r.retries, durationMs: r.durationMs }, 'app synced');
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
