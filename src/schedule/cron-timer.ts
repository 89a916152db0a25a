import cronParser from 'cron-parser';
import type { Clock, Timer } from '../config/clock.js';

/**
 * The schedule's clock: the slots of `schedule.cron` in `schedule.timezone`, as cron-parser 4 reads
 * them, for both schedulers (SQLite's process, PostgreSQL's workers). Read this way a time that a
 * DST change skips (02:30 on the spring-forward day in Europe/Berlin) falls at the jump, 03:30
 * CEST, and a time that happens twice (02:30 in autumn) once. node-cron (SQLite) skipped the spring
 * night; pg-boss's cron (PostgreSQL), which looks back from each check with cron-parser's prev(),
 * skipped it too and ticked twice in autumn (probe78 F2).
 */

/** The longest single wait: the wall clock is read again at least this often, so a slot passed while the machine slept is seen within it. */
export const MAX_WAIT_MS = 60_000;

/** The first slot strictly after `fromMs`. */
export function nextSlot(schedule: { cron: string; timezone: string }, fromMs: number): Date {
  return cronParser.parseExpression(schedule.cron, { tz: schedule.timezone, currentDate: new Date(fromMs) }).next().toDate();
}

/** A slot reached: `lateMs` after its time (the process or machine was not running), with `missed` earlier slots passed unrun. */
export interface Slot {
  at: Date;
  lateMs: number;
  missed: number;
}

export interface CronTimer {
  stop(): void;
  /** The slot waited for, undefined once stopped. */
  nextRun(): Date | undefined;
}

/**
 * Calls `onSlot` at each slot (not awaited: a slot's work may outlast the next one). A slot whose
 * time passed unseen (the machine suspended, the process stopped by a debugger) is run once when
 * the clock is read again, however many slots passed: the next sync reads everything since the
 * last anyway.
 */
export function startCronTimer(schedule: { cron: string; timezone: string }, clock: Clock, onSlot: (slot: Slot) => void): CronTimer {
  let next: Date | undefined = nextSlot(schedule, clock.now());
  let timer: Timer | undefined;
  const arm = (): void => {
    if (!next) return;
    timer = clock.setTimeout(beat, Math.min(MAX_WAIT_MS, Math.max(0, next.getTime() - clock.now())));
  };
  const beat = (): void => {
    if (!next) return;
    const now = clock.now();
    if (now >= next.getTime()) {
      let at = next;
      let missed = 0;
      // The newest slot passed is the one run; count the ones before it (bounded: a year of minutes is not counted one by one).
      for (let s = nextSlot(schedule, at.getTime()); s.getTime() <= now && missed < 10_000; s = nextSlot(schedule, s.getTime())) {
        at = s;
        missed++;
      }
      next = nextSlot(schedule, now);
      try {
        onSlot({ at, lateMs: now - at.getTime(), missed });
      } finally {
        arm();
      }
      return;
    }
    arm();
  };
  arm();
  return {
    stop() {
      next = undefined;
      timer?.cancel();
    },
    nextRun: () => next,
  };
}
