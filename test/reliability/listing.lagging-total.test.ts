import { afterAll, describe, expect, it } from 'vitest';
import { laggingTotal, misses, tmp } from './support/listing-gaps.js';

/**
 * A `total` one request behind (a cached count) while a listed call is removed (hostile probe,
 * session 24): the fall shows on the page after the one read first after the removal, and paging
 * stepped back only as many pages as the fall covers, re-reading the page just read, not the one the
 * moved-up call landed on. 67 of 100 whole listings lost a call, ok (the removed call, counted,
 * made the distinct count the total). It now steps back one page more.
 */
afterAll(() => tmp.cleanup());
const SEEDS = Array.from({ length: 30 }, (_, i) => i + 1);
const size = (s: number): number => [10, 20, 25][s % 3]!;

describe('a total cached a request behind, a listed call removed', () => {
  it('removed before a page in the middle: ok only with every call the service held throughout', async () => {
    expect(await misses('lagging-mid', (s) => ({ pageSize: size(s), fake: { calls: size(s) * 4 + 1 + (s % 7), deleteBeforePage: 2 + (s % 3), rewriteList: laggingTotal() } }), SEEDS)).toEqual([]);
  }, 120_000);

  it('removed before the empty page that ends the listing: the same', async () => {
    expect(await misses('lagging-end', (s) => ({ pageSize: size(s), fake: { calls: size(s) * 4, deleteBeforePage: 4 + (s % 2), rewriteList: laggingTotal() } }), SEEDS)).toEqual([]);
  }, 120_000);
});
