import pLimit from 'p-limit';
import type { AppSettings, Settings } from '../config/load.js';
import { runSyncCoordinated } from '../sync/run-sync.js';
import type { SyncDeps } from '../sync/sync-app.js';
import { refreshExtras, type ExtrasRefresh } from './refresh-extras.js';
import type { VerifyWindow } from './stored-state.js';
import { appVerified, openCallsApi, verifyApp, type AppVerification, type VerifyDeps } from './verify-app.js';

export interface VerifyReport {
  /** Every app's stored calls agree with a listing proved complete. */
  ok: boolean;
  apps: AppVerification[];
}

export interface AppRepair {
  appId: string;
  region: string;
  /** The backfill sync of the window: its status and, when not ok, why. */
  sync?: { status: string; callsWritten: number; detailFetches: number; error?: string };
  /** Get Call of the extra calls. */
  extras?: ExtrasRefresh;
  /** Why nothing was done for the app (another process is syncing it, or the app needed nothing). */
  skipped?: string;
}

export interface RepairReport {
  before: VerifyReport;
  repairs: AppRepair[];
  after: VerifyReport;
}

/** Apps verified side by side: each has its own rate limit (as in sync). */
const APP_CONCURRENCY = 4;

/** Verifies each app in `apps` over the window (see verifyApp); never throws for the service's failures. */
export async function verifyApps(deps: VerifyDeps, settings: Settings, apps: readonly AppSettings[], window: VerifyWindow, signal?: AbortSignal): Promise<VerifyReport> {
  const limit = pLimit(APP_CONCURRENCY);
  const results = await Promise.all(
    apps.map((app) =>
      limit(async (): Promise<AppVerification> => {
        const api = openCallsApi(deps, settings, app, signal);
        if ('problem' in api) {
          return { appId: app.appId, region: app.region, listed: 0, stored: 0, missing: [], changed: [], extra: [], rejected: [], changedFields: {}, listingComplete: false, problem: api.problem };
        }
        return verifyApp(deps, settings, app, api, window, signal);
      }),
    ),
  );
  return { ok: results.every(appVerified), apps: results };
}

/**
 * Verifies, brings every app that did not verify to what the service says, and verifies again.
 * The repair is sync itself, as a backfill of the window (the whole listing when there is none):
 * it lists, Gets what sync would Get, writes page by page, and never moves the watermark. Calls
 * stored live that the listing no longer shows are then asked for one by one (refreshExtras).
 * The sync runs as `callsync sync` does (the lease on SQLite, each app's lock on PostgreSQL), so it never overlaps another sync of an app.
 */
export async function verifyAndRepair(deps: SyncDeps, settings: Settings, apps: readonly AppSettings[], window: VerifyWindow, signal?: AbortSignal): Promise<RepairReport> {
  const before = await verifyApps(deps, settings, apps, window, signal);
  const broken = apps.filter((a) => !appVerified(before.apps.find((v) => v.appId === a.appId)!));
  const repairs: AppRepair[] = apps.map((a) => ({ appId: a.appId, region: a.region, ...(broken.includes(a) ? {} : { skipped: 'nothing to repair' }) }));
  if (broken.length && !signal?.aborted) {
    const outcome = await runSyncCoordinated(deps, settings, {
      appIds: broken.map((a) => a.appId),
      // A backfill never moves the watermark; from 0 it lists the whole history.
      since: window.since ?? 0,
      ...(window.until !== undefined ? { until: window.until } : {}),
      ...(signal ? { signal } : {}),
    });
    for (const app of broken) {
      const repair = repairs.find((r) => r.appId === app.appId)!;
      if (outcome.skipped) {
        repair.skipped = outcome.reason;
        continue;
      }
      const result = outcome.summary.results.find((r) => r.appId === app.appId);
      if (!result) {
        repair.skipped = outcome.summary.skippedApps?.find((s) => s.appId === app.appId)?.reason ?? 'not synced';
        continue;
      }
      repair.sync = { status: result.status, callsWritten: result.callsWritten, detailFetches: result.detailFetches, ...(result.error ? { error: result.error } : {}) };
      const extra = before.apps.find((v) => v.appId === app.appId)!.extra;
      // A sync stopped by auth, plan or a signal would stop the Gets the same way.
      if (extra.length && (result.status === 'ok' || result.status === 'partial')) {
        const api = openCallsApi(deps, settings, app, signal);
        if (!('problem' in api)) repair.extras = await refreshExtras(deps, app, api, extra, settings.concurrency, outcome.summary.runId);
      }
    }
  }
  const after = await verifyApps(deps, settings, apps, window, signal);
  return { before, repairs, after };
}
