import { systemClock, type Clock } from '../config/clock.js';
import { ConfigError } from '../config/errors.js';
import { cronProblem, isTimeZone, TIMEZONE_PROBLEM } from '../config/schema.js';
import { startCronTimer, type Slot } from './cron-timer.js';

/**
 * Throws ConfigError when the schedule's cron expression or time zone is not valid: the config's own
 * checks (config/schema.ts), for a schedule that did not come through it.
 */
function validateSchedule(schedule: { cron: string; timezone: string }): void {
  const problem = cronProblem(schedule.cron);
  if (problem) throw new ConfigError(`schedule.cron ${JSON.stringify(schedule.cron)} ${problem}`);
  if (!isTimeZone(schedule.timezone)) throw new ConfigError(`schedule.timezone ${JSON.stringify(schedule.timezone)} ${TIMEZONE_PROBLEM}`);
}

export interface NightlyTask {
  stop(): void;
  /** When the next tick is due; undefined once stopped. */
  getNextRun(): Date | undefined;
}

export interface NightlyOptions {
  clock?: Clock;
  /** A slot reached while the previous tick still runs: skipped (not piled up), and said here. */
  onOverlap?: (slot: Slot) => void;
}

/**
 * The scheduled entry point on SQLite (one process): each slot of the cron (cron-timer.ts: DST
 * nights and a machine that slept included) runs `tick`, unless the previous tick is still running.
 * On PostgreSQL the workers send the slots to the job engine (engine-worker.ts).
 */
export function scheduleNightlySync(schedule: { cron: string; timezone: string }, tick: (slot: Slot) => Promise<void>, opts: NightlyOptions = {}): NightlyTask {
  validateSchedule(schedule);
  let running = false;
  const timer = startCronTimer(schedule, opts.clock ?? systemClock, (slot) => {
    if (running) {
      opts.onOverlap?.(slot);
      return;
    }
    running = true;
    void tick(slot)
      .catch(() => undefined)
      .finally(() => {
        running = false;
      });
  });
  return { stop: () => timer.stop(), getNextRun: () => timer.nextRun() };
}
