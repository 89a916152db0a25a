import cron, { type ScheduledTask } from 'node-cron';
import { ConfigError } from '../config/errors.js';
import { cronProblem, isTimeZone, TIMEZONE_PROBLEM } from '../config/schema.js';

/**
 * Throws ConfigError when the schedule's cron expression or time zone is not valid: the config's own
 * checks (config/schema.ts), for a schedule that did not come through it.
 */
function validateSchedule(schedule: { cron: string; timezone: string }): void {
  const problem = cronProblem(schedule.cron);
  if (problem) throw new ConfigError(`schedule.cron ${JSON.stringify(schedule.cron)} ${problem}`);
  if (!isTimeZone(schedule.timezone)) throw new ConfigError(`schedule.timezone ${JSON.stringify(schedule.timezone)} ${TIMEZONE_PROBLEM}`);
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
