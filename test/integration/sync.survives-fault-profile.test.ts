import { describe, expect } from 'vitest';
import { integrityProblems } from '../helpers/db-dump.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';
import { expectOnlyUnreadCalls } from '../helpers/unread.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

const dialects = await testDialects();

describe.each(dialects)('with every fault on, sync ends equal to the ground truth [%s]', (dialect) => {
  test.override({
    dialect,
    simApps: [{ calls: 2000 }],
    simFaults: {
      http429Rate: 0.004, // each random 429 holds the whole app for its 1 s Retry-After
      http5xxRate: 0.04,
      resetRate: 0.03,
      truncateRate: 0.03,
      stallRate: 0.005,
      stallMs: 5_000,
      notFoundCalls: 6,
      malformedCalls: 4,
      insertWhilePaging: { afterPage: 2, count: 7 },
      retryAfter: 'seconds',
    },
  });

  it('loses nothing, duplicates nothing, and picks up calls that arrived while paging on the next run', async ({ sim, database: db }) => {
    const settings = testSettings(sim, ['app1'], db, { detailFetch: 'always', maxAttempts: 10, requestTimeoutMs: 1_000 });
    const first = (await syncWith(settings)).results[0]!;
    expect(first.status === 'ok' || first.status === 'partial').toBe(true);
    expect(first.retries).toBeGreaterThan(0);
    const truth = sim.truth('app1');
    await withStore(db, async (s) => {
      const diff = await diffAgainstTruth(s.db, truth);
      // After the first run only the calls that appeared mid-listing (newest) may be missing.
      for (const line of diff) expect(line).toMatch(/^missing call /);
      expect(diff.length).toBeLessThanOrEqual(7 + first.failedCalls);
    });
    const second = (await syncWith(settings)).results[0]!;
    // Everything but the 4 calls served unreadably (partial for them alone, never ok).
    expectOnlyUnreadCalls(second, 4);
    await withStore(db, async (s) => {
      expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]);
      expect(await integrityProblems(s.db)).toEqual([]);
      const rejected = await s.db.selectFrom('rejected_records').select(['record_key', 'reason', 'endpoint']).execute();
      expect(new Set(rejected.map((r) => r.record_key))).toEqual(truth.malformed);
      for (const r of rejected) expect(r.reason.length).toBeGreaterThan(3);
    });
    // Bounded work: no retry storm.
    expect(first.requests).toBeLessThan((2000 + 30) * 1.6);
  });
});
