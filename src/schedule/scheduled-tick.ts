import { join } from 'node:path';
import type { Settings } from '../config/load.js';
import { BILLING_COLUMNS, computeBilling, staleApps, type StaleApp } from '../export/billing.js';
import { isoUtc, resolvePeriod } from '../export/period.js';
import { unplacedMinutesNotes } from '../export/unplaced-minutes.js';
import { writeFileAtomic } from '../export/write-file.js';
import { formatRows } from '../export/write-table.js';
import { reconcileReport, type ReconcileReport } from '../reconcile/reconcile-report.js';
import { unixSeconds } from '../config/clock.js';
import { runSyncCoordinated, type RunSummary } from '../sync/run-sync.js';
import { dayOfMonth, dueMonth, exportDueAt, monthsToExport, readScheduledExport, saveScheduledExport } from './export-due.js';
import type { AppRetryEvent, SyncDeps } from '../sync/sync-app.js';
import { saveTickAt } from './tick-record.js';

export type TickResult =
  | { skipped: true; reason: string }
  | ({ skipped: false; summary: RunSummary } & TickFollowUp);

/** What follows a tick's syncs: the reconciliation summary, and on the export day the billing export. */
export interface TickFollowUp {
  reconciliation?: ReconcileReport;
  /** The billing exports written, oldest month first: more than one when ticks missed export days (probe78 F1). */
  exports?: ScheduledExport[];
  /** The newest export written (the last of `exports`), as before. */
  exportPath?: string;
  staleApps?: StaleApp[];
  /** Minutes the export's period holds in no figure (calls without a start time), one line per app, as `export billing` warns them. */
  unplaced?: string[];
}

/** One billing export a tick wrote. */
export interface ScheduledExport {
  month: string;
  path: string;
  staleApps: StaleApp[];
  unplaced: string[];
  /** True when its export day had passed without a tick writing it: this tick caught it up. */
  late: boolean;
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
 * After a tick's syncs: the reconciliation summary (schedule.reconcile), then the previous month's
 * billing export into `schedule.exportDir` on `schedule.exportDayOfMonth`, and any month whose export
 * day passed without a tick writing it (export-due.ts). An export is written even when some app
 * failed, since it is a snapshot of what the database holds; the rows of such an app are marked stale
 * (`stale` = 1) and the result names it.
 */
export async function tickFollowUp(deps: Pick<SyncDeps, 'db' | 'clock' | 'log'>, settings: Settings, runId: string): Promise<TickFollowUp> {
  const result: TickFollowUp = {};
  const log = deps.log.child({ runId });
  // `status` tells a schedule that stopped from one that runs by this (tick-record.ts).
  await saveTickAt(deps.db, unixSeconds(deps.clock));
  if (settings.schedule.reconcile) {
    result.reconciliation = await reconcileReport(deps.db, {}, 20);
    for (const s of result.reconciliation.summary) log.info({ ...s }, 'reconciliation');
  }
  const now = unixSeconds(deps.clock);
  const { exportDayOfMonth, timezone } = settings.schedule;
  const record = await readScheduledExport(deps.db);
  const months = monthsToExport(record, now, settings.schedule);
  for (const month of months) {
    const written = await writeMonth(deps, settings, month, now, log);
    await saveScheduledExport(deps.db, { month, at: now, path: written.path, stale: written.staleApps.map((a) => `${a.app_id} (${a.region}): ${a.reason}`) });
    (result.exports ??= []).push(written);
    Object.assign(result, { exportPath: written.path, staleApps: written.staleApps, unplaced: written.unplaced });
  }
  // The first tick of a schedule, not on the export day: what was due before it is not its to write,
  // but from here on a missed export day is caught up (and said by `status`).
  if (!record && !months.length && exportDayOfMonth > 0) await saveScheduledExport(deps.db, { month: dueMonth(now, timezone, exportDayOfMonth), at: now, baseline: true });
  return result;
}

async function writeMonth(deps: Pick<SyncDeps, 'db' | 'log'>, settings: Settings, month: string, now: number, log: SyncDeps['log']): Promise<ScheduledExport> {
  const { exportDayOfMonth, timezone, exportDir, exportFormat } = settings.schedule;
  const period = resolvePeriod({ month, timezone });
  // An app whose sync failed is still exported (what the database holds), marked stale on its rows.
  const stale = await staleApps(deps.db, period, { apps: settings.apps, nowSec: now });
  const rows = await computeBilling(deps.db, period, { stale });
  const path = join(exportDir, `billing-${month}.${exportFormat}`);
  await writeFileAtomic(path, formatRows(rows, BILLING_COLUMNS, exportFormat), { createDir: true });
  const late = dayOfMonth(now, timezone) !== exportDayOfMonth || dueMonth(now, timezone, exportDayOfMonth) !== month;
  if (late) log.warn({ path, month, dueAt: isoUtc(exportDueAt(month, timezone, exportDayOfMonth)) }, `billing export of ${month} written late: no tick wrote it on its export day`);
  // Said as `export billing` says it: the scheduled file is the one finance is sent, and it left
  // these minutes out without a word (probe68 F4).
  const unplaced = await unplacedMinutesNotes(deps.db, period);
  for (const note of unplaced) log.warn({ path, month }, `billing export: ${note}`);
  const staleNames = stale.map((a) => `${a.app_id} (${a.region})`);
  if (stale.length) log.warn({ path, month, rows: rows.length, staleApps: staleNames }, `billing export written with stale apps: ${stale.map((a) => `${a.app_id} (${a.region}): ${a.reason}`).join('; ')}`);
  else log.info({ path, month, rows: rows.length }, 'billing export written');
  return { month, path, staleApps: stale, unplaced, late };
}
