import { describe, expect, it } from 'vitest';
import { EdgeTies } from '../../src/source/listing-ties.js';
import type { EntryTimes } from '../../src/source/listing-order.js';

/** A page of calls `ids` started at `times` (the other time fields absent). */
const page = (ids: string[], times: number[]): [string[], EntryTimes[]] => [ids, times.map((t) => ({ startedAt: t, initiatedAt: null, endedAt: null }))];

/** Reads `passes` (each a list of pages, read in order) and returns EdgeTies' verdict on startedAt. */
function verdict(passes: [string[], number[]][][], sizes: number[] = []): string | undefined {
  const ties = new EdgeTies();
  for (const [k, pages] of passes.entries()) {
    ties.startPass(sizes[k] ?? 3);
    pages.forEach(([ids, times], i) => ties.page(...page(ids, times), i > 0));
  }
  return ties.unproved('startedAt');
}

describe('EdgeTies: calls of one time across a page boundary', () => {
  // Four calls a–d of time 50 fill places 2–5; pages of three, newest first.
  it('split the same way by both passes (a and b twice, c and d never): unproved, naming the time', () => {
    const skipping: [string[], number[]][] = [[['x', 'a', 'b'], [90, 50, 50]], [['a', 'b', 'y'], [50, 50, 10]]];
    expect(verdict([skipping, skipping])).toMatch(/showed 4 entries of one startedAt \(50\) across a page boundary but 2 distinct calls/);
  });

  it('a second pass that lists the other two: proved', () => {
    expect(verdict([[[['x', 'a', 'b'], [90, 50, 50]], [['a', 'b', 'y'], [50, 50, 10]]], [[['x', 'c', 'd'], [90, 50, 50]], [['a', 'b', 'y'], [50, 50, 10]]]])).toBeUndefined();
  });

  it('a call arriving between the two pages of the first pass (one shown twice, none lost), a second pass without it: proved', () => {
    // Pass 1: a, b | (n arrives at the top, all move down one place) b, c, d. Pass 2 reads a–d in place.
    const shifted: [string[], number[]][] = [[['x', 'a', 'b'], [90, 50, 50]], [['b', 'c', 'd'], [50, 50, 50]], [['y'], [10]]];
    const clean: [string[], number[]][] = [[['n', 'x', 'a'], [95, 90, 50]], [['b', 'c', 'd'], [50, 50, 50]], [['y'], [10]]];
    expect(verdict([shifted, clean])).toBeUndefined();
  });

  it('one pass that shows each call once: proved; a time split first by a later pass is not held (the first saw it on one page)', () => {
    expect(verdict([[[['x', 'a', 'b'], [90, 50, 50]], [['c', 'd', 'y'], [50, 50, 10]]]])).toBeUndefined();
    expect(verdict([[[['x', 'a', 'b'], [90, 50, 50]], [['c', 'y', 'z'], [40, 10, 5]]], [[['x', 'a', 'c'], [90, 50, 40]], [['c', 'y', 'z'], [40, 10, 5]]]])).toBeUndefined();
  });

  it('a pass read at another page size starts the groups anew: a time split only at the new size is held from that pass on', () => {
    // Pass 1 at size 4 shows a–d whole on one page; passes 2 and 3 at size 3 split them the same way (c, d never shown).
    const whole: [string[], number[]][] = [[['x', 'a', 'b', 'c'], [90, 50, 50, 50]], [['d', 'y'], [50, 10]]];
    const skipping: [string[], number[]][] = [[['x', 'a', 'b'], [90, 50, 50]], [['a', 'b', 'y'], [50, 50, 10]]];
    expect(verdict([whole, skipping, skipping], [4, 3, 3])).toMatch(/showed 4 entries of one startedAt \(50\) across a page boundary but 2 distinct calls/);
    // Held from the first pass only, as before, the later passes' split went unseen.
    expect(verdict([whole, skipping, skipping], [3, 3, 3])).toBeUndefined();
  });
});
