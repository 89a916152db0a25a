import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../source/request-pacer.js';

export interface RuntimeClock extends Clock {
  random(): number;
}

/** The real clock; tests may pass their own. */
export const systemClock: RuntimeClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : undefined),
  random: () => Math.random(),
};

export function unixSeconds(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}
