import type { Kysely } from 'kysely';
import type { Settings } from '../config/load.js';
import { getSetting, saveSetting } from '../store/settings-repo.js';
import type { Database } from '../store/schema.js';
import { nextSlot } from './cron-timer.js';

/**
 * When the schedule last ticked on this database, so `callsync status` can tell a schedule that
 * stopped (its process gone, its container not restarted) from one that runs: it said `healthy`
 * while the last sync grew days old, since every run it saw had ended ok (probe78 left it).
 */
export const LAST_TICK_SETTING = 'schedule_last_tick';

/** Slots may pass this long after their time before a missing tick counts: a tick's syncs take time to start and end. */
export const TICK_GRACE_SECONDS = 3_600;

/** Records that a tick's syncs ran at `atSec` (unix seconds). */
export async function saveTickAt(db: Kysely<Database>, atSec: number): Promise<void> {
  await saveSetting(db, LAST_TICK_SETTING, String(atSec));
}

/** The last tick's time, or undefined when no schedule has ticked on this database (it may not use one). */
export async function readTickAt(db: Kysely<Database>): Promise<number | undefined> {
  const v = await getSetting(db, LAST_TICK_SETTING);
  return v === undefined || !Number.isFinite(Number(v)) ? undefined : Number(v);
}

/**
 * The two slots after the last tick when both passed, the second more than the grace ago: a whole
 * slot went by without a tick. One slot alone may be a tick still running, or one skipped because the
 * one before it ran long.
 */
export function missedSlots(schedule: Settings['schedule'], lastTickSec: number, nowSec: number): [Date, Date] | undefined {
  const first = nextSlot(schedule, lastTickSec * 1000);
  const second = nextSlot(schedule, first.getTime());
  return second.getTime() / 1000 + TICK_GRACE_SECONDS <= nowSec ? [first, second] : undefined;
}
