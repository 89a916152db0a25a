import { setTimeout as delay } from 'node:timers/promises';

/** A pending timer of a Clock; cancelling twice, or after it ran, does nothing. */
export interface Timer {
  cancel(): void;
}

/**
 * Every reading of time and every wait of the sync goes through one injected Clock, so tests of
 * timing (lease expiry and renewal, the page writer's delay, pacing, retry backoff) advance a test
 * clock instead of waiting, and a timing bug shows up at the exact millisecond it concerns.
 * It sits in config/, at the bottom of the stages, like the environment: what the process reads from
 * outside, read in one place (it imports nothing from src/); source, store and sync all use it.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects early when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs `fn` once after `ms`. `fn` may return a promise (a test clock awaits it); it must not reject. */
  setTimeout(fn: () => void | Promise<void>, ms: number): Timer;
  /**
   * Runs `fn` every `ms` until cancelled. Unlike setTimeout it never keeps the process alive (it is
   * unref'd): a background chore such as a lease renewal must not hold up the exit of finished work.
   */
  setInterval(fn: () => void | Promise<void>, ms: number): Timer;
  /** A number in [0, 1): retry jitter, injected with the time it spreads. */
  random(): number;
}

/** The real clock; tests pass test/helpers/test-clock.ts instead. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : undefined),
  setTimeout: (fn, ms) => {
    const t = setTimeout(() => void fn(), ms);
    return { cancel: () => clearTimeout(t) };
  },
  setInterval: (fn, ms) => {
    const t = setInterval(() => void fn(), ms);
    t.unref();
    return { cancel: () => clearInterval(t) };
  },
  random: () => Math.random(),
};

export function unixSeconds(clock: Pick<Clock, 'now'>): number {
  return Math.floor(clock.now() / 1000);
}
