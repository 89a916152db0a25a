import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import pLimit from 'p-limit';
import type { Settings } from '../config/load.js';
import { ConfigError } from '../config/errors.js';
import { saveTolerance } from '../store/settings-repo.js';
import { destinationOf } from '../store/destinations/index.js';
import { unfinishedCopy } from '../store/copy-database.js';
import { migrateToLatest } from '../store/migrate.js';
import { appLockKey, withAdvisoryLock } from '../store/app-lock.js';
import { syncApp } from './sync-app.js';
import { abandonStaleRuns } from '../store/runs-repo.js';
import { unixSeconds } from '../config/clock.js';
import { acquireLease, DEFAULT_LEASE_TTL_MS, describeHolder } from './lease.js';
import type { AppSyncResult, SyncDeps, SyncOptions } from './sync-app.js';
import type { LeasesTable } from '../store/schema.js';

export interface RunSummary {
  runId: string;
  results: AppSyncResult[];
  /** Apps this process left alone: another process was syncing them. */
  skippedApps?: { appId: string; region: string; reason: string }[];
  /** True when every app synced completely. */
  ok: boolean;
}

/** Apps synced at once; each has its own rate limit, and the database serialises the writes. */
const APP_CONCURRENCY = 4;

/**
 * What every sync needs of the database before its first write: the latest schema, and the
 * reconciliation tolerance of this config (call_figure_rows and the views judge calls by it).
 */
export async function prepareDatabase(db: SyncDeps['db'], settings: Settings): Promise<void> {
  await migrateToLatest(db);
  // A sync into a half-copied database found its calls' list entries unchanged and wrote nothing:
  // ok, with the participants the copy never reached missing (probe round 17 a, 3).
  const copying = await unfinishedCopy(db);
  if (copying !== undefined) throw new ConfigError(`the database holds an unfinished copy of ${copying} (callsync copy stopped before its end): run the same callsync copy again before syncing into it`);
  await saveTolerance(db, settings.reconcileToleranceMinutes);
}

/**
 * Syncs every configured app (or those named in `appIds`). Migrates the database first. One app's
 * failure never stops the others; the summary says which failed and why.
 */
export async function runSync(
  deps: SyncDeps,
  settings: Settings,
  opts: Omit<SyncOptions, 'runId'> & { runId?: string; appIds?: readonly string[] } = {},
): Promise<RunSummary> {
  await prepareDatabase(deps.db, settings);
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

/** Why this process may not sync (or change sync state) now: who holds SYNC_LEASE. */
const syncLeaseBusy = (heldBy: LeasesTable): string => `another callsync is syncing this database: ${describeHolder(heldBy)}`;

export type ExclusiveRunOutcome = { skipped: true; reason: string } | { skipped: false; summary: RunSummary };

export interface CoordinatedOptions extends Omit<SyncOptions, 'runId'> {
  runId?: string;
  appIds?: readonly string[];
  leaseTtlMs?: number;
}

/**
 * The way a process syncs a shared database. A destination with one writer at a time (SQLite) has
 * the whole sync take the database lease (a second process skips). Where several processes may
 * write at once (PostgreSQL: `concurrentWriters`), each app is synced under its own advisory lock
 * (store/app-lock.ts): processes started together share the apps, none is synced twice at once,
 * and a dead process's apps are free the moment its connection drops.
 */
export async function runSyncCoordinated(deps: SyncDeps, settings: Settings, opts: CoordinatedOptions = {}): Promise<ExclusiveRunOutcome> {
  const ttl = opts.leaseTtlMs ?? settings.leaseTtlSeconds * 1000;
  if (destinationOf(deps.db).capabilities.concurrentWriters) return { skipped: false, summary: await runSyncShared(deps, settings, opts) };
  return runSyncExclusive(deps, settings, { ...opts, leaseTtlMs: ttl });
}

/** The reason an app was left alone because another process holds its lock. */
export const APP_BUSY = 'another callsync process is syncing it now';

/**
 * Syncs one app under its advisory lock (PostgreSQL); `undefined` when another process holds it.
 * Runs the app left 'running' by a process that died are marked abandoned first: holding the lock,
 * no one else can be running them.
 */
export async function syncAppLocked(deps: SyncDeps, settings: Settings, app: Settings['apps'][number], opts: SyncOptions): Promise<AppSyncResult | undefined> {
  const got = await withAdvisoryLock(deps.db, appLockKey(app.appId, app.region), async (lost) => {
    await abandonStaleRuns(deps.db, [app], unixSeconds(deps.clock));
    // The lock's session may end mid-sync (probe67 F1): stop writing, as on a lost SQLite lease.
    return syncApp(deps, settings, app, { ...opts, signal: opts.signal ? AbortSignal.any([opts.signal, lost]) : lost });
  });
  return got.locked ? got.value : undefined;
}

/** Several processes, one database: each app under its own lock (see runSyncCoordinated). */
export async function runSyncShared(deps: SyncDeps, settings: Settings, opts: CoordinatedOptions = {}): Promise<RunSummary> {
  await prepareDatabase(deps.db, settings);
  const runId = opts.runId ?? randomUUID();
  const log = deps.log.child({ runId });
  if (opts.signal) setMaxListeners(0, opts.signal);
  const apps = opts.appIds?.length ? settings.apps.filter((a) => opts.appIds!.includes(a.appId)) : settings.apps;
  // Start at a random app so processes started together fan out instead of queueing on the first.
  const offset = Math.floor(deps.clock.random() * apps.length);
  const queue = apps.map((_, i) => apps[(i + offset) % apps.length]!);
  const results: AppSyncResult[] = [];
  const skippedApps: NonNullable<RunSummary['skippedApps']> = [];
  const worker = async (): Promise<void> => {
    for (let app = queue.shift(); app && !opts.signal?.aborted; app = queue.shift()) {
      const r = await syncAppLocked({ ...deps, log }, settings, app, { ...opts, runId });
      if (r) results.push(r);
      else skippedApps.push({ appId: app.appId, region: app.region, reason: APP_BUSY });
    }
  };
  await Promise.all(Array.from({ length: Math.min(APP_CONCURRENCY, apps.length) }, worker));
  return { runId, results, skippedApps, ok: results.every((r) => r.status === 'ok') };
}

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
    const reason = syncLeaseBusy(got.heldBy);
    deps.log.warn({ lease: SYNC_LEASE, holderPid: got.heldBy.pid, holderHost: got.heldBy.host }, `skipped: ${reason}`);
    return { skipped: true, reason };
  }
  try {
    await abandonStaleRuns(deps.db, settings.apps, unixSeconds(deps.clock));
    const signal = opts.signal ? AbortSignal.any([opts.signal, got.lease.lost]) : got.lease.lost;
    return { skipped: false, summary: await runSync(deps, settings, { ...opts, signal }) };
  } finally {
    // A database still locked at release must not replace the run's outcome; the lease expires anyway.
    await got.lease.release().catch((err: unknown) => deps.log.warn({ err: (err as Error).message }, 'lease not released; it expires by itself'));
  }
}

export type WithoutSyncOutcome<T> = { busy: string } | { busy?: undefined; value: T };

/**
 * Runs `fn` while no sync of these apps can run, holding what a sync takes (runSyncCoordinated):
 * the database's sync lease on SQLite, each app's advisory lock on PostgreSQL. When a sync holds it
 * now, `fn` does not run and `busy` says who holds it: a change made beside a running sync (a
 * watermark reset, say) would be overwritten by that sync as it ends.
 */
export async function whileNotSyncing<T>(
  deps: Pick<SyncDeps, 'db' | 'clock'>,
  apps: readonly { appId: string; region: string }[],
  leaseTtlMs: number,
  fn: () => Promise<T>,
): Promise<WithoutSyncOutcome<T>> {
  if (destinationOf(deps.db).capabilities.concurrentWriters) {
    const lockFrom = async (i: number): Promise<WithoutSyncOutcome<T>> => {
      const app = apps[i];
      if (!app) return { value: await fn() };
      const got = await withAdvisoryLock(deps.db, appLockKey(app.appId, app.region), () => lockFrom(i + 1));
      return got.locked ? got.value : { busy: `${app.appId} (${app.region}): ${APP_BUSY}` };
    };
    return lockFrom(0);
  }
  const got = await acquireLease(deps.db, SYNC_LEASE, deps.clock, leaseTtlMs);
  if (!got.acquired) return { busy: syncLeaseBusy(got.heldBy) };
  try {
    return { value: await fn() };
  } finally {
    // As in runSyncExclusive: a database still locked at release must not turn what `fn` did into
    // a failure; the lease expires by itself.
    await got.lease.release().catch(() => undefined);
  }
}
