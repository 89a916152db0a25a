import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Slot } from '../../src/schedule/cron-timer.js';
import { scheduleNightlySync } from '../../src/schedule/nightly-sync.js';

/**
 * probe78 F2: the SQLite scheduler (`callsync schedule` on SQLite) on the nights a time zone's clocks
 * change, and after the machine slept through a tick. node-cron, which it used, finds no 02:30 on
 * the spring-forward day in Europe/Berlin (02:00 → 03:00) and skipped that night without a word; a
 * tick whose time passed while the machine slept was dropped (node-cron's "missed execution" went to
 * its own console warning), so the night was skipped too. Now a slot the DST change skips runs at the
 * jump (03:00), a repeated time once, and a slot missed while asleep runs once on waking.
 * Driven by fake timers (Date and setTimeout): the scheduler reads the system clock, as the CLI's does.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

afterEach(() => {
  vi.useRealTimers();
});

/** The ticks a schedule runs from `fromIso` over `ms`, advanced an hour at a time. */
async function ticksOver(cron: string, timezone: string, fromIso: string, ms: number): Promise<string[]> {
  vi.useFakeTimers({ now: Date.parse(fromIso), toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  const ticks: string[] = [];
  const task = scheduleNightlySync({ cron, timezone }, async () => {
    ticks.push(new Date().toISOString());
  });
  try {
    for (let t = 0; t < ms; t += HOUR) await vi.advanceTimersByTimeAsync(HOUR);
  } finally {
    await task.stop();
  }
  return ticks.map((t) => t.replace(/:\d\d\.\d{3}Z$/, 'Z'));
}

describe('the SQLite scheduler on DST nights', () => {
  it('02:30 in Europe/Berlin: the spring-forward night (no 02:30 that day) ticks once, at the jump', async () => {
    // 2027-03-28: 02:00 CET becomes 03:00 CEST.
    expect(await ticksOver('30 2 * * *', 'Europe/Berlin', '2027-03-26T12:00:00Z', 3 * DAY)).toEqual([
      '2027-03-27T01:30Z', // 02:30 CET
      '2027-03-28T01:30Z', // 03:30 CEST: 02:30 does not exist; the tick runs after the jump
      '2027-03-29T00:30Z', // 02:30 CEST
    ]);
  });

  it('02:00 in Europe/Berlin (the jump itself) ticks that night too', async () => {
    const ticks = await ticksOver('0 2 * * *', 'Europe/Berlin', '2027-03-26T12:00:00Z', 3 * DAY);
    expect(ticks).toHaveLength(3);
    expect(ticks[1]).toMatch(/^2027-03-28T01:0\dZ$/);
  });

  it('02:30 in Europe/Berlin on the autumn night (02:30 happens twice) ticks once', async () => {
    // 2027-10-31: 03:00 CEST becomes 02:00 CET.
    const ticks = await ticksOver('30 2 * * *', 'Europe/Berlin', '2027-10-29T12:00:00Z', 3 * DAY);
    expect(ticks.filter((t) => t.startsWith('2027-10-31'))).toHaveLength(1);
    expect(ticks).toHaveLength(3);
  });

  it('a tick whose time passed while the machine slept runs once on waking, and the next night as usual', async () => {
    vi.useFakeTimers({ now: Date.parse('2027-05-10T12:00:00Z'), toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const ticks: string[] = [];
    const slots: Slot[] = [];
    const task = scheduleNightlySync({ cron: '0 2 * * *', timezone: 'UTC' }, async (slot) => {
      ticks.push(new Date().toISOString());
      slots.push(slot);
    });
    try {
      await vi.advanceTimersByTimeAsync(HOUR);
      // Suspended from 13:00 to 07:00 the next morning (three nights' 02:00 included: two days
      // later): the wall clock jumps, the process's timers do not run meanwhile.
      vi.setSystemTime(Date.parse('2027-05-12T07:00:00Z'));
      await vi.advanceTimersByTimeAsync(2 * HOUR);
      expect(ticks, 'one tick on waking for the nights slept through').toHaveLength(1);
      expect(Date.parse(ticks[0]!)).toBeGreaterThanOrEqual(Date.parse('2027-05-12T07:00:00Z'));
      expect(Date.parse(ticks[0]!)).toBeLessThan(Date.parse('2027-05-12T07:05:00Z'));
      // What the CLI says of it: the newest slot passed, five hours late, one before it unrun.
      expect({ at: slots[0]!.at.toISOString(), late: slots[0]!.lateMs >= 5 * HOUR, missed: slots[0]!.missed }).toEqual({ at: '2027-05-12T02:00:00.000Z', late: true, missed: 1 });
      for (let t = 0; t < DAY; t += HOUR) await vi.advanceTimersByTimeAsync(HOUR);
      expect(ticks.slice(1).map((t) => t.slice(0, 16))).toEqual(['2027-05-13T02:00']);
    } finally {
      await task.stop();
    }
  });

  it('a slot reached while the previous tick still runs is skipped and said, not piled up', async () => {
    vi.useFakeTimers({ now: Date.parse('2027-05-10T00:00:30Z'), toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    let release: () => void = () => undefined;
    let started = 0;
    const overlapped: string[] = [];
    const task = scheduleNightlySync(
      { cron: '0 * * * *', timezone: 'UTC' },
      async () => {
        started++;
        await new Promise<void>((r) => (release = r));
      },
      { onOverlap: (slot) => overlapped.push(slot.at.toISOString()) },
    );
    try {
      await vi.advanceTimersByTimeAsync(HOUR); // 01:00: the first tick starts and hangs
      await vi.advanceTimersByTimeAsync(HOUR); // 02:00: still running
      expect([started, overlapped]).toEqual([1, ['2027-05-10T02:00:00.000Z']]);
      release();
      await vi.advanceTimersByTimeAsync(HOUR); // 03:00: runs again
      expect(started).toBe(2);
    } finally {
      task.stop();
    }
  });
});
