import { describe, expect, it } from 'vitest';
import { ListingEnd, type EntryTimes } from '../../src/source/listing-evidence.js';
import { cameUp, excessOver, TotalTrail, type Page } from '../../src/source/listing-proof.js';
import { unexplained } from '../../src/source/listing-verdict.js';
import type { PassResult } from '../../src/source/listing-types.js';

const at = (startedAt: number | null): EntryTimes => ({ startedAt, initiatedAt: null, endedAt: null });
const page = (entries: [string, number | null][]): Page => ({ ids: entries.map(([id]) => id), times: entries.map(([, t]) => at(t)) });
const newestFirst = { key: 'startedAt', order: 'newest-first' } as const;
const never = (): boolean => false;

describe('cameUp: calls that came up onto the first page', () => {
  const before = page([['a', 50], ['b', 40], ['c', 30], ['d', 20]]);

  it('a call gone from the middle while calls below it stayed is a removal, even when the call that came up shows no time', () => {
    expect(cameUp(before, page([['a', 50], ['c', 30], ['d', 20], ['x', null]]), never, newestFirst)).toBe(1);
  });

  it('calls pushed off the end by arrivals at the head are no removal', () => {
    expect(cameUp(before, page([['n', 60], ['a', 50], ['b', 40], ['c', 30]]), never, newestFirst)).toBe(0);
  });

  it('calls of one time swapping places across the page edge are no removal', () => {
    const tied = page([['a', 50], ['b', 40], ['c', 30], ['d', 30]]);
    expect(cameUp(tied, page([['a', 50], ['b', 40], ['d', 30], ['e', 30]]), never, newestFirst)).toBe(0);
  });
});

function passWith(totals: number[], o: { stoppedEarly?: boolean; above?: number } = {}): { pass: PassResult; trail: TotalTrail } {
  const end = new ListingEnd(10);
  const trail = new TotalTrail();
  totals.forEach((total, index) => {
    trail.see(total, 10);
    end.afterPage({ index, count: 10, meta: { total }, repeatsPrevious: false, overlapsPrevious: false }, 0);
  });
  return { trail, pass: { end, pages: totals.length, stoppedEarly: o.stoppedEarly ?? false, why: 'test', distinct: 0, movedIn: 0, rose: 0, above: o.above ?? 0, served: 0 } };
}

describe('excessOver: distinct calls past what the totals allow', () => {
  it('a count above a level total is excess; removals the totals showed allow it; a window has no count', () => {
    const level = passWith([105, 105, 105]);
    expect(excessOver(106, level.pass, level.trail)).toBe(1);
    expect(excessOver(105, level.pass, level.trail)).toBe(0);
    const fell = passWith([107, 106, 105]);
    expect(excessOver(107, fell.pass, fell.trail)).toBe(0);
    expect(excessOver(108, fell.pass, fell.trail)).toBe(1);
    const window = passWith([105, 105], { stoppedEarly: true });
    expect(excessOver(200, window.pass, window.trail)).toBe(0);
  });
});

describe('unexplained: arrivals above the cursor must show on the first page read again', () => {
  const { pass } = passWith([80, 81], { above: 1 });
  it('an arrival taken from a repeated call is explained by a new call on the first page, not otherwise', () => {
    expect(unexplained({ moved: 0, fresh: 1 }, pass)).toBe(false);
    expect(unexplained({ moved: 0, fresh: 0 }, pass)).toBe(true);
    expect(unexplained({ moved: 1, fresh: 5 }, pass)).toBe(true);
  });
});
