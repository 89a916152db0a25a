import cron, { type ScheduledTask } from 'node-cron';
import { ConfigError } from '../config/errors.js';

/** Throws ConfigError when the schedule's cron expression or time zone is not valid. */
export function validateSchedule(schedule: { cron: string; timezone: string }): void {
  if (!cron.validate(schedule.cron)) {
    throw new ConfigError(`schedule.cron ${JSON.stringify(schedule.cron)} is not a valid cron expression; e.g. "0 2 * * *" for 02:00 every night`);
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: schedule.timezone });
  } catch {
    throw new ConfigError(`schedule.timezone ${JSON.stringify(schedule.timezone)} is not an IANA time zone; e.g. "UTC" or "Europe/Berlin"`);
  }
}

/**
 * The scheduled entry point: a cron expression mapped to one use case, nothing else. `noOverlap`
 * makes a tick that finds the previous one still running skip instead of piling up.
 */
export function scheduleNightlySync(schedule: { cron: string; timezone: string }, tick: () => Promise<void>): ScheduledTask {
  validateSchedule(schedule);
  // SQLite's schedule: one process. On PostgreSQL the job engine's cron sends the ticks (engine-worker.ts).
  return cron.schedule(schedule.cron, () => tick(), { name: 'callsync-nightly-sync', timezone: schedule.timezone, noOverlap: true });
}
