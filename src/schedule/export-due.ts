import type { Kysely, Transaction } from 'kysely';
import type { Settings } from '../config/load.js';
import { localMidnight, previousMonth } from '../export/period.js';
import { getSetting, saveSetting } from '../store/settings-repo.js';
import type { Database } from '../store/schema.js';
import { nextTick } from './job-engine.js';

/**
 * Which monthly billing exports the schedule owes. A month's export is due from its export day
 * (`schedule.exportDayOfMonth` of the month after, local midnight in `schedule.timezone`); the tick
 * that writes it records the month in `callsync_settings`. A tick that did not run that day (the
 * process down, the machine asleep, the tick skipped: a sync by hand held the database, or the cron's
 * time did not exist that night) left the month unwritten with no word anywhere (probe78 F1): the
 * next tick now writes every month due since the last one recorded, and `callsync status` names a
 * month still unwritten a day after its first tick.
 */

/** The `callsync_settings` key of the newest month the schedule exported (or found already due when it first ticked). */
export const SCHEDULED_EXPORT_SETTING = 'scheduled_export';

export interface ScheduledExportRecord {
  /** YYYY-MM: the newest month whose scheduled export was written, or (baseline) already due when the schedule first ticked. */
  month: string;
  /** Unix seconds the record was written. */
  at: number;
  /** The file, when written. */
  path?: string;
  /** The apps whose rows it marked stale (`app (region): reason`). */
  stale?: string[];
  /** True when no export was written: the schedule's first tick found this month already due and left it to `export billing`. */
  baseline?: boolean;
}

function monthParts(month: string): [number, number] {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return [y, m];
}

function monthText(y: number, m: number): string {
  return `${y}-${String(m).padStart(2, '0')}`;
}

/** The month after YYYY-MM. */
export function monthAfter(month: string): string {
  const [y, m] = monthParts(month);
  return m === 12 ? monthText(y + 1, 1) : monthText(y, m + 1);
}

function monthBefore(month: string): string {
  const [y, m] = monthParts(month);
  return m === 1 ? monthText(y - 1, 12) : monthText(y, m - 1);
}

/** Day of the month of `nowSec` in `tz`. */
export function dayOfMonth(nowSec: number, tz: string): number {
  return Number(new Intl.DateTimeFormat('en-US', { timeZone: tz, day: 'numeric' }).format(new Date(nowSec * 1000)));
}

/** Unix seconds at which `month`'s export falls due: local midnight of the export day of the month after. */
export function exportDueAt(month: string, tz: string, exportDay: number): number {
  const [y, m] = monthParts(monthAfter(month));
  return localMidnight(y, m, exportDay, tz);
}

/** The newest month whose export is due at `nowSec`: the previous month from the export day on, the one before until then. */
export function dueMonth(nowSec: number, tz: string, exportDay: number): string {
  const prev = previousMonth(nowSec, tz);
  return dayOfMonth(nowSec, tz) >= exportDay ? prev : monthBefore(prev);
}

/** The months after `after` up to `until`, oldest first (none when `until` is not later). */
export function monthsBetween(after: string, until: string): string[] {
  const out: string[] = [];
  for (let m = monthAfter(after); m <= until; m = monthAfter(m)) out.push(m);
  return out;
}

export async function readScheduledExport(db: Kysely<Database> | Transaction<Database>): Promise<ScheduledExportRecord | undefined> {
  const raw = await getSetting(db, SCHEDULED_EXPORT_SETTING);
  if (raw === undefined) return undefined;
  try {
    const r = JSON.parse(raw) as Partial<ScheduledExportRecord>;
    return typeof r.month === 'string' && /^\d{4}-\d{2}$/.test(r.month) && typeof r.at === 'number' ? (r as ScheduledExportRecord) : undefined;
  } catch {
    return undefined;
  }
}

export async function saveScheduledExport(db: Kysely<Database> | Transaction<Database>, record: ScheduledExportRecord): Promise<void> {
  await saveSetting(db, SCHEDULED_EXPORT_SETTING, JSON.stringify(record));
}

/**
 * The months a tick at `nowSec` exports, oldest first: every month due since the one recorded, and on
 * the export day itself the previous month again (each tick of that day writes it anew, as before).
 * Before any record (a schedule's first tick) only the export day's month: months due before the
 * schedule ran are not its to write.
 */
export function monthsToExport(record: ScheduledExportRecord | undefined, nowSec: number, schedule: Settings['schedule']): string[] {
  const { timezone, exportDayOfMonth } = schedule;
  if (exportDayOfMonth <= 0) return [];
  const due = dueMonth(nowSec, timezone, exportDayOfMonth);
  const months = record ? monthsBetween(record.month, due) : [];
  if (dayOfMonth(nowSec, timezone) === exportDayOfMonth && !months.includes(due)) months.push(due);
  return months;
}

/**
 * The months whose scheduled export is overdue at `nowSec`: due since the month recorded, and a day
 * past the schedule's first tick after they fell due (that tick, or the next night's, should have
 * written them). None before the schedule's first tick (no record): `callsync schedule` may not be used.
 */
export function overdueExports(record: ScheduledExportRecord | undefined, nowSec: number, schedule: Settings['schedule']): { month: string; dueAt: number }[] {
  if (!record || schedule.exportDayOfMonth <= 0) return [];
  const { timezone, exportDayOfMonth } = schedule;
  return monthsBetween(record.month, dueMonth(nowSec, timezone, exportDayOfMonth))
    .map((month) => ({ month, dueAt: exportDueAt(month, timezone, exportDayOfMonth) }))
    .filter((m) => nowSec >= Math.floor(nextTick(schedule, new Date(m.dueAt * 1000 - 1000)).getTime() / 1000) + 86_400);
}
