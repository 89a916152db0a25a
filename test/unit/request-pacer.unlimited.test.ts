import { describe, expect, it } from 'vitest';
import { RequestPacer } from '../../src/source/request-pacer.js';
import { TestClock } from '../helpers/test-clock.js';

/** A TestClock that counts what the pacer asks of it. */
function countingClock(): { clock: TestClock; reads: () => number; sleeps: () => number } {
  const clock = new TestClock(Date.UTC(2026, 0, 1));
  let reads = 0;
  let sleeps = 0;
  const now = clock.now.bind(clock);
  const sleep = clock.sleep.bind(clock);
  clock.now = () => (reads++, now());
  clock.sleep = (ms, signal) => (sleeps++, sleep(ms, signal));
  return { clock, reads: () => reads, sleeps: () => sleeps };
}

describe('requestsPerMinute "unlimited" (issue 16)', () => {
  it('does no pacing work at all per request: no clock read, no sleep, no promise', () => {
    const c = countingClock();
    const pacer = new RequestPacer('unlimited', c.clock);
    for (let i = 0; i < 10_000; i++) expect(pacer.acquire()).toBeUndefined();
    expect([c.reads(), c.sleeps()]).toEqual([0, 0]);
  });

  it('still holds requests after a 429 until the pause ends, then goes back to none', async () => {
    const c = countingClock();
    const pacer = new RequestPacer('unlimited', c.clock);
    pacer.pauseUntil(c.clock.now() + 5_000);
    const held = pacer.acquire();
    expect(held).toBeInstanceOf(Promise);
    await c.clock.advance(5_000);
    await held;
    expect(pacer.acquire()).toBeUndefined();
    expect(c.sleeps()).toBe(1);
  });
});
