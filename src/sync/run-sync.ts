import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import pLimit from 'p-limit';
import type { Settings } from '../config/load.js';
import { saveTolerance } from '../reconcile/reconcile-report.js';
import { migrateToLatest } from '../store/migrate.js';
import { abandonStaleRuns } from '../store/runs-repo.js';
import { unixSeconds } from './clock.js';
import { acquireLease, DEFAULT_LEASE_TTL_MS, describeHolder } from './lease.js';
import { syncApp, type AppSyncResult, type SyncDeps, type SyncOptions } from './sync-app.js';

export interface RunSummary {
  runId: string;
  results: AppSyncResult[];
  /** True when every app synced completely. */
  ok: boolean;
}

/** Apps synced at once; each has its own rate limit, and the database serialises the writes. */
const APP_CONCURRENCY = 4;

/**
 * Syncs every configured app (or those named in `appIds`). Migrates the database first. One app's
 * failure never stops the others; the summary says which failed and why.
 */
export async function runSync(
  deps: SyncDeps,
  settings: Settings,
  opts: Omit<SyncOptions, 'runId'> & { runId?: string; appIds?: readonly string[] } = {},
): Promise<RunSummary> {
  await migrateToLatest(deps.db);
  await saveTolerance(deps.db, settings.reconcileToleranceMinutes);
  const runId = opts.runId ?? randomUUID();
  const apps = opts.appIds?.length ? settings.apps.filter((a) => opts.appIds!.includes(a.appId)) : settings.apps;
  const limit = pLimit(APP_CONCURRENCY);
  const log = deps.log.child({ runId });
  // Every in-flight request listens on the stop signal: far more than the default 10 listeners.
  if (opts.signal) setMaxListeners(0, opts.signal);
  const results = await Promise.all(apps.map((app) => limit(() => syncApp({ ...deps, log }, settings, app, { ...opts, runId }))));
  return { runId, results, ok: results.every((r) => r.status === 'ok') };
}

/** The lease that keeps two processes from syncing one database at once. */
export const SYNC_LEASE = 'sync';

export type ExclusiveRunOutcome = { skipped: true; reason: string } | { skipped: false; summary: RunSummary };

/**
 * runSync under the database's sync lease: when another live process holds it, returns skipped with
 * the reason instead of syncing; a lease left by a crashed process expires and is taken over. Runs
 * that crashed processes left 'running' are marked 'abandoned'. Losing the lease mid-run (this
 * process stalled past the TTL) stops the run like a signal would.
 */
export async function runSyncExclusive(
  deps: SyncDeps,
  settings: Settings,
  opts: Omit<SyncOptions, 'runId'> & { runId?: string; appIds?: readonly string[]; leaseTtlMs?: number } = {},
): Promise<ExclusiveRunOutcome> {
  await migrateToLatest(deps.db);
  const got = await acquireLease(deps.db, SYNC_LEASE, deps.clock, opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS);
  if (!got.acquired) {
    const reason = `another callsync is syncing this database: ${describeHolder(got.heldBy)}`;
    deps.log.warn({ lease: SYNC_LEASE, holderPid: got.heldBy.pid, holderHost: got.heldBy.host }, `skipped: ${reason}`);
    return { skipped: true, reason };
  }
  try {
    const appIds = settings.apps.map((a) => a.appId);
    await abandonStaleRuns(deps.db, appIds, unixSeconds(deps.clock));
    const signal = opts.signal ? AbortSignal.any([opts.signal, got.lease.lost]) : got.lease.lost;
    return { skipped: false, summary: await runSync(deps, settings, { ...opts, signal }) };
  } finally {
    await got.lease.release();
  }
}

function fmtSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** One line per app, for terminals and logs alike. */
export function formatAppSummary(r: AppSyncResult): string {
  const head = `${r.appId} (${r.region}): ${r.status === 'ok' ? 'ok' : r.status.toUpperCase()} [${r.mode}]`;
  const body =
    `${r.pages} pages, ${r.callsSeen} calls listed, ${r.callsWritten} written ` +
    `(${r.callsFromList} from the list alone, ${r.detailFetches} needed Get Call), ` +
    `${r.notFound} not found, ${r.rejected} rejected, ${r.groupsSynced} groups (${r.membersSynced} members)` +
    `${r.groupsNotFound ? `, ${r.groupsNotFound} groups gone` : ''}; ` +
    `${r.requests} requests (${r.requestsByKind.list ?? 0} list, ${r.requestsByKind.get ?? 0} get, ${r.requestsByKind.members ?? 0} members), ` +
    `${r.retries} retries, ${r.rateLimited} rate-limited; ${fmtSeconds(r.durationMs)}`;
  return r.error ? `${head}: ${body}\n  error: ${r.error}` : `${head}: ${body}`;
}
