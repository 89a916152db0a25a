import type { Kysely } from 'kysely';
import type { Settings } from '../config/load.js';
import { isoUtc } from '../export/period.js';
import { overdueExports, readScheduledExport } from '../schedule/export-due.js';
import type { Database } from '../store/schema.js';

/** What `callsync status` says of the schedule's monthly billing export. */
export interface ScheduledExportState {
  /** The newest export a tick wrote, with the apps it marked stale. */
  last?: { month: string; path: string; writtenAt: string; stale: string[] };
  /** Months whose export day passed a day or more ago, their first tick with it, and no tick has written them. */
  overdue: { month: string; dueAt: string }[];
  timezone?: string;
}

/** Undefined when no schedule has ticked on this database (it may not be used): nothing to say. */
export async function scheduledExportState(db: Kysely<Database>, schedule: Settings['schedule'] | undefined, nowSec: number): Promise<ScheduledExportState | undefined> {
  const record = await readScheduledExport(db);
  if (!record) return undefined;
  const overdue = schedule ? overdueExports(record, nowSec, schedule).map((o) => ({ month: o.month, dueAt: isoUtc(o.dueAt) })) : [];
  return {
    ...(record.baseline || !record.path ? {} : { last: { month: record.month, path: record.path, writtenAt: isoUtc(record.at), stale: record.stale ?? [] } }),
    overdue,
    ...(schedule ? { timezone: schedule.timezone } : {}),
  };
}

export function scheduledExportLines(state: ScheduledExportState | undefined): string[] {
  if (!state) return [];
  const lines: string[] = [];
  const l = state.last;
  if (l) lines.push(`scheduled billing export: ${l.path} (${l.month}) written at ${l.writtenAt}${l.stale.length ? `; rows marked stale=1: ${l.stale.join('; ')}` : ''}`);
  const tz = state.timezone ?? 'UTC';
  for (const o of state.overdue) {
    lines.push(`SCHEDULED EXPORT OVERDUE: billing ${o.month} fell due at ${o.dueAt} and no tick has written it (is \`callsync schedule\` running?); the next tick writes it, \`callsync export billing --month ${o.month} --timezone ${tz}\` gives it now (\`schedule.exportDayOfMonth: 0\` turns the monthly export off)`);
  }
  return lines;
}
