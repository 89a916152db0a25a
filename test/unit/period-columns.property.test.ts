import SqliteDatabase from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utcPeriod } from '../../src/transform/call-rows.js';

/**
 * Issue 16: the transform writes `started_day` / `started_month` for new calls, migration
 * 20261123T040000 fills them for stored ones with SQLite's date()/strftime(): both must give the same
 * text for any start the source keeps (whole seconds > 0), or a month filter would split a month
 * between old and new calls.
 */
describe('utcPeriod agrees with SQLite date() and strftime(%Y-%m)', () => {
  const db = new SqliteDatabase(':memory:');
  const q = db.prepare<[number, number], { day: string | null; month: string | null }>(`select date(?, 'unixepoch') as day, strftime('%Y-%m', ?, 'unixepoch') as month`);
  const check = (sec: number): void => {
    const sqlite = q.get(sec, sec)!;
    expect({ day: utcPeriod(sec, 10), month: utcPeriod(sec, 7) }, String(sec)).toEqual(sqlite);
  };

  it('at month, year and range edges', () => {
    for (const sec of [1, 59, 1698796799, 1698796800, 951782400, 951868800, 253402300799, 253402300800]) check(sec);
  });

  it('for any whole second in the years 1970–9999 and beyond', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 300_000_000_000 }), check), { numRuns: 3000 });
  });

  it('for runs of nearby times in either order, as a sync writes them (a day\'s texts are reused)', () => {
    const edge = 1698796800; // 2023-11-01T00:00:00Z: a day, a month
    for (let sec = edge - 90_000; sec < edge + 90_000; sec += 997) check(sec);
    for (const sec of [edge, edge - 1, edge, edge + 86_399, edge + 86_400, edge - 1, edge - 86_400, edge - 86_401]) check(sec);
    fc.assert(fc.property(fc.array(fc.integer({ min: edge - 200_000, max: edge + 200_000 }), { minLength: 2, maxLength: 50 }), (xs) => xs.forEach(check)), { numRuns: 300 });
  });

  it('is null without a start', () => {
    expect([utcPeriod(null, 10), utcPeriod(undefined, 7)]).toEqual([null, null]);
  });
});
