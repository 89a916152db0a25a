import { describe, expect, it } from 'vitest';
import { localMidnight } from '../../src/export/period.js';

const HOUR = 3_600_000;
const clocks = new Map<string, Intl.DateTimeFormat>();
/** What a clock in `tz` shows at `t`, as if it were UTC (ms). */
function wallClock(t: number, tz: string): number {
  let f = clocks.get(tz);
  if (!f) clocks.set(tz, (f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })));
  const p = f.formatToParts(new Date(t));
  const n = (k: string): number => Number(p.find((x) => x.type === k)?.value);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
}

/** The day's start found the slow way: the first minute whose clock shows that date. */
function firstMinuteOf(midnightAsUtc: number, tz: string): number {
  let t = midnightAsUtc - 16 * HOUR;
  while (wallClock(t, tz) < midnightAsUtc) t += 60_000;
  return t / 1000;
}

const iso = (sec: number): string => new Date(sec * 1000).toISOString();

describe('localMidnight: where a local day begins', () => {
  // Probe round 16 (a, F5): a DST jump at 00:00 put the day's start at 23:00 of the day before,
  // so that day's calls were billed to the previous day (export --from/--to, the report's bars).
  it('a DST jump at midnight: the day begins at the jump', () => {
    expect(iso(localMidnight(2026, 9, 6, 'America/Santiago'))).toBe('2026-09-06T04:00:00.000Z');
    expect(iso(localMidnight(2026, 3, 8, 'America/Havana'))).toBe('2026-03-08T05:00:00.000Z');
    expect(iso(localMidnight(2026, 3, 29, 'Atlantic/Azores'))).toBe('2026-03-29T01:00:00.000Z');
  });

  it('ordinary days and jumps at other hours', () => {
    expect(iso(localMidnight(2026, 11, 1, 'America/New_York'))).toBe('2026-11-01T04:00:00.000Z');
    expect(iso(localMidnight(2026, 11, 2, 'America/New_York'))).toBe('2026-11-02T05:00:00.000Z');
    expect(iso(localMidnight(2026, 10, 25, 'Europe/Berlin'))).toBe('2026-10-24T22:00:00.000Z');
    expect(iso(localMidnight(2026, 11, 1, 'Asia/Kolkata'))).toBe('2026-10-31T18:30:00.000Z');
    expect(iso(localMidnight(2026, 11, 1, 'UTC'))).toBe('2026-11-01T00:00:00.000Z');
  });

  it('every zone, every day of 2026 next to an offset change: the first minute its clocks show that date', () => {
    let days = 0;
    const wrong: string[] = [];
    for (const tz of Intl.supportedValuesOf('timeZone')) {
      for (let day = 0; day < 365; day++) {
        const midnight = Date.UTC(2026, 0, 1 + day);
        const offset = (t: number): number => wallClock(t, tz) - t;
        if (offset(midnight - 30 * HOUR) === offset(midnight + 30 * HOUR)) continue;
        days++;
        const d = new Date(midnight);
        const got = localMidnight(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), tz);
        const want = firstMinuteOf(midnight, tz);
        if (got !== want) wrong.push(`${tz} ${d.toISOString().slice(0, 10)}: ${iso(got)}, not ${iso(want)}`);
      }
    }
    expect(days).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });
});
