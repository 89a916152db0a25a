import { join } from 'node:path';
import type { Settings } from '../config/load.js';
import { BILLING_COLUMNS, computeBilling, staleApps, type StaleApp } from '../export/billing.js';
import { previousMonth, resolvePeriod } from '../export/period.js';
import { unplacedMinutesNotes } from '../export/unplaced-minutes.js';
import { writeFileAtomic } from '../export/write-file.js';
import { formatRows } from '../export/write-table.js';
import { reconcileReport, type ReconcileReport } from '../reconcile/reconcile-report.js';
import { unixSeconds } from '../config/clock.js';
import { runSyncCoordinated, type RunSummary } from '../sync/run-sync.js';
import type { AppRetryEvent, SyncDeps } from '../sync/sync-app.js';

export type TickResult =
  | { skipped: true; reason: string }
  | ({ skipped: false; summary: RunSummary } & TickFollowUp);

/** Day of the month of `nowSec` in `tz`. */
function dayOfMonth(nowSec: number, tz: string): number {
  return Number(new Intl.DateTimeFormat('en-US', { timeZone: tz, day: 'numeric' }).format(new Date(nowSec * 1000)));
}

/** What follows a tick's syncs: the reconciliation summary, and on the export day the billing export. */
export interface TickFollowUp {
  reconciliation?: ReconcileReport;
  exportPath?: string;
  staleApps?: StaleApp[];
  /** Minutes the export's period holds in no figure (calls without a start time), one line per app, as `export billing` warns them. */
  unplaced?: string[];
}

/**
 * One scheduled tick on SQLite (one process, the database's lease): sync every app, then the
 * follow-up (reconcile, export). On PostgreSQL the job engine runs the same steps as jobs
 * (engine-worker.ts).
 */
export async function runScheduledTick(deps: SyncDeps, settings: Settings, opts: { signal?: AbortSignal; onRetry?: (e: AppRetryEvent) => void } = {}): Promise<TickResult> {
  const outcome = await runSyncCoordinated(deps, settings, {
    ...(opts.signal ? { signal: opts.signal } : {}),
    // A dead API during the night shows up in the log as it happens, not only when retries run out.
    ...(opts.onRetry ? { onRetry: opts.onRetry } : {}),
  });
  if (outcome.skipped) return outcome;
  if (opts.signal?.aborted) return { skipped: false, summary: outcome.summary };
  return { skipped: false, summary: outcome.summary, ...(await tickFollowUp(deps, settings, outcome.summary.runId)) };
}

/**
 * After a tick's syncs: the reconciliation summary (schedule.reconcile), then on
 * `schedule.exportDayOfMonth` the previous month's billing export into `schedule.exportDir`. The
 * export is written even when some app failed, since it is a snapshot of what the database holds;
 * the rows of such an app are marked stale (`stale` = 1) and the result names it.
 */
export async function tickFollowUp(deps: Pick<SyncDeps, 'db' | 'clock' | 'log'>, settings: Settings, runId: string): Promise<TickFollowUp> {
  const result: TickFollowUp = {};
  const log = deps.log.child({ runId });
  if (settings.schedule.reconcile) {
    result.reconciliation = await reconcileReport(deps.db, {}, 20);
    for (const s of result.reconciliation.summary) log.info({ ...s }, 'reconciliation');
  }
  const now = unixSeconds(deps.clock);
  const { exportDayOfMonth, timezone, exportDir, exportFormat } = settings.schedule;
  if (exportDayOfMonth > 0 && dayOfMonth(now, timezone) === exportDayOfMonth) {
    const month = previousMonth(now, timezone);
    const period = resolvePeriod({ month, timezone });
    // An app whose sync failed is still exported (what the database holds), marked stale on its rows.
    const stale = await staleApps(deps.db, period, { apps: settings.apps, nowSec: now });
    const rows = await computeBilling(deps.db, period, { stale });
    const path = join(exportDir, `billing-${month}.${exportFormat}`);
    await writeFileAtomic(path, formatRows(rows, BILLING_COLUMNS, exportFormat), { createDir: true });
    result.exportPath = path;
    result.staleApps = stale;
    // Said as `export billing` says it: the scheduled file is the one finance is sent, and it left
    // these minutes out without a word (probe68 F4).
    result.unplaced = await unplacedMinutesNotes(deps.db, period);
    for (const note of result.unplaced) log.warn({ path, month }, `billing export: ${note}`);
    const staleNames = stale.map((a) => `${a.app_id} (${a.region})`);
    if (stale.length) log.warn({ path, month, rows: rows.length, staleApps: staleNames }, `billing export written with stale apps: ${stale.map((a) => `${a.app_id} (${a.region}): ${a.reason}`).join('; ')}`);
    else log.info({ path, month, rows: rows.length }, 'billing export written');
  }
  return result;
}
