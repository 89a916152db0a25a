import { afterAll, describe, expect, it } from 'vitest';
import { misses, PROBE_SCENARIOS, tmp } from './support/listing-gaps.js';

/**
 * Whole listings a hostile probe (session 24) found ok with a call missing that the service held
 * throughout, on the sync's user-visible result: the database against the fake's own calls. Runs ok
 * with a call missing, of seeds 1–100, before the fixes of session 25 → after (every other run is
 * exact and ok, or partial):
 * - a page served one row off (it begins with the previous page's last call and skips one) while a
 *   call is inserted below the cursor, `total` right: 81 → 0. The repeat was taken for a call that
 *   arrived above the cursor; such arrivals now show on the first page read again, or the listing is
 *   read again (unexplained), and the page that keeps skipping its call leaves that pass short;
 * - a listed call removed above the cursor and one inserted below it between the same two requests,
 *   `total` level: 4 → 0; the same among calls of equal times at a page edge: 12 → 0. The removed
 *   call, counted, stood in for the call the shift skipped (excessOver; a call gone from the middle
 *   of the first page read again is a removal, cameUp);
 * - `total` each page's own row count: 4 → 0 (a count past the totals proves nothing); session 29
 *   reads such totals as absent, and holds ties split across a boundary in listings without a total
 *   (noTotalAmongTies: 4 → 0 over seeds 1–30).
 */
afterAll(() => tmp.cleanup());
/** Seeds 1–20, and the seeds beyond them that lost a call before (a sweep of 1–100). */
const SEEDS: Record<keyof typeof PROBE_SCENARIOS, number[]> = {
  repeatAndSkipWithInsertBelow: [],
  removalAndInsertLevelTotal: [47, 49, 73, 97],
  removalAndInsertAmongTies: [27, 38, 39, 47, 49, 51, 53, 67, 73, 75, 87],
  perPageTotal: [35, 49, 70, 84],
  noTotalAmongTies: [26],
  cappedPerPageTotalsAmongTies: [22, 28],
  capMidListingNoTotalAmongTies: [21, 22, 23, 24, 25, 26, 27, 28, 29, 30],
};

describe('whole listings: never ok with a call missing', () => {
  it.each(Object.entries(PROBE_SCENARIOS) as [keyof typeof PROBE_SCENARIOS, (typeof PROBE_SCENARIOS)[keyof typeof PROBE_SCENARIOS]][])('%s', async (name, make) => {
    const seeds = [...Array.from({ length: 20 }, (_, i) => i + 1), ...SEEDS[name]];
    expect(await misses(name, make, seeds)).toEqual([]);
  }, 300_000);
});
