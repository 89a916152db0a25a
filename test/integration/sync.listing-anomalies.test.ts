import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { FaultProfile } from '../../src/simulator/index.js';
import { it } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

describe('paging survives a listing that misbehaves', () => {
  // The list requests each may take: the 10 real pages and a few more. The understating lie states a
  // third of `total` too, and a count past the total proves nothing: the listing is read twice, the
  // passes held against each other (excessOver), as with no total; and figures the listing already
  // exceeds agree with no short page, so each pass asks the page after its last (probe69): 25.
  const cases: [string, FaultProfile, number][] = [
    ['total_pages that understates', { lieTotalPages: 'low' }, 25],
    ['an empty page in the middle', { emptyPageAt: 3 }, 13],
    ['pagination without per_page', { omitPerPage: true }, 13],
  ];
  for (const [name, faults, listRequests] of cases) {
    it(`reaches the truth with ${name}`, async ({ startSim, dir }) => {
      const sim = await startSim([{ calls: 950 }], faults);
      const db = join(dir, `${name.replace(/\W+/g, '-')}.db`);
      const r = (await syncWith(testSettings(sim, ['app1'], db))).results[0]!;
      expect(r.status).toBe('ok');
      expect(r.listingOrder).toBe('newest-first');
      await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim!.truth('app1'))).toEqual([]));
      expect(sim.stats('app1').list).toBeLessThanOrEqual(listRequests);
    });
  }

  it('a total that overstates cannot be proved: every call is stored, yet the run is partial and names the shortfall', async ({ startSim, dir }) => {
    const sim = await startSim([{ calls: 950 }], { lieTotalPages: 'high' });
    const db = join(dir, 'overstated.db');
    const r = (await syncWith(testSettings(sim, ['app1'], db))).results[0]!;
    expect(r.status).toBe('partial');
    expect(r.error).toMatch(/List Calls reported 2850 calls but 950 distinct calls could be listed in two passes \(1900 short\)/);
    await withStore(db, async (s) => {
      expect(await diffAgainstTruth(s.db, sim!.truth('app1'))).toEqual([]);
      // The watermark does not move on a listing that did not add up.
      expect(await s.db.selectFrom('sync_state').selectAll().execute()).toEqual([]);
      const run = await s.db.selectFrom('sync_runs').selectAll().executeTakeFirstOrThrow();
      expect([run.listing_complete, run.listed_distinct, run.reported_total, run.listing_order]).toEqual([0, 950, 2850, 'newest-first']);
    });
  });

  it('steps back when calls are removed above the cursor, so none is skipped', async ({ startSim, dir }) => {
    const sim = await startSim([{ calls: 950 }], { removeWhilePaging: { afterPage: 3, count: 5 } });
    const before = new Set(sim.truth('app1').calls.keys());
    const db = join(dir, 'removed.db');
    const r = (await syncWith(testSettings(sim, ['app1'], db))).results[0]!;
    expect(r.status).toBe('ok');
    const after = sim.truth('app1');
    const removed = new Set([...before].filter((id) => !after.calls.has(id)));
    expect(removed.size).toBe(5);
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, after, { allowExtra: removed })).toEqual([]));
  });

  it('stops with a clear error on a page that repeats forever', async ({ startSim, dir }) => {
    const sim = await startSim([{ calls: 950 }], { repeatPageForever: true });
    const r = (await syncWith(testSettings(sim, ['app1'], join(dir, 'repeat.db')))).results[0]!;
    expect(r.status).toBe('failed');
    expect(r.error).toMatch(/app1 \(us\): List Calls page 2 repeats the previous page/);
    // Page 0 (which this server answers as page 1), page 1 to check that, and page 2.
    expect(sim.stats('app1').list).toBe(3);
  });
});
