import { afterAll, describe, expect, it } from 'vitest';
import { GAPS, misses, tmp } from './support/listing-gaps.js';

/**
 * Known gaps of the whole-listing proof (hostile probe, session 24): services a real API may be
 * (a per-page total, a page served a row off, calls coming and going between the same two
 * requests) for which a sync said ok with a call missing. Each case fails while its gap stands, so
 * they run only with CALLSYNC_GAPS=1 (`CALLSYNC_GAPS=1 npx vitest run test/reliability/listing.known-gaps.test.ts`);
 * whoever closes one moves it into the suite proper (as listing.lagging-total did). Runs ok with a
 * call missing, seeds 1–100, when found: repeat-and-skip with an insert below 81, removal and insert
 * 4 (among ties 8 of 60), per-page total 4.
 */
afterAll(() => tmp.cleanup());

describe.runIf(process.env.CALLSYNC_GAPS === '1')('known gaps of the listing proof: never ok with a call missing', () => {
  it.each(Object.entries(GAPS))('%s', async (name, gap) => {
    expect(await misses(name, gap.make, gap.seeds)).toEqual([]);
  }, 600_000);
});
