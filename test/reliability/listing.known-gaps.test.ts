import { afterAll, describe, expect, it } from 'vitest';
import { KNOWN_GAPS, misses, tmp } from './support/listing-gaps.js';

/**
 * Known gaps of the whole-listing proof (hostile probe, session 25): calls coming and going between
 * the same two requests so that neither `total` nor the count shows it, and a `total` too noisy to
 * show a removal. Each case fails while its gap stands, so they run only with CALLSYNC_GAPS=1
 * (`CALLSYNC_GAPS=1 npx vitest run test/reliability/listing.known-gaps.test.ts`); whoever closes one
 * moves it into the suite proper (as listing.totals-and-repeats did for session 24's).
 */
afterAll(() => tmp.cleanup());

describe.runIf(process.env.CALLSYNC_GAPS === '1')('known gaps of the listing proof: never ok with a call missing', () => {
  it.each(Object.entries(KNOWN_GAPS))('%s', async (name, gap) => {
    expect(await misses(name, gap.make, gap.seeds)).toEqual([]);
  }, 600_000);
});
