import { describe, expect } from 'vitest';
import { integrityProblems } from '../helpers/db-dump.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

const dialects = await testDialects();

describe.each(dialects)('a sync reaches the simulator ground truth [%s]', (dialect) => {
  test.override({ dialect, simApps: [{ calls: 1500 }] });

  it('detailFetch auto: stores complete list entries directly and fetches only the rest', async ({ sim, database: db }) => {
    const summary = await syncWith(testSettings(sim, ['app1'], db));
    const r = summary.results[0]!;
    expect(r.status).toBe('ok');
    expect(r.mode).toBe('full');
    const truth = sim.truth('app1');
    expect(r.callsFromList).toBeGreaterThan(truth.calls.size / 2);
    expect(r.detailFetches).toBeGreaterThan(0);
    // Every listed call stored from its entry or fetched; a few stored from entries are asked again after the listing (auditedAgain).
    expect(r.auditedAgain).toBeLessThanOrEqual(2);
    expect(r.callsFromList + r.detailFetches - r.auditedAgain).toBe(r.callsSeen);
    expect(sim.stats('app1').get).toBe(r.detailFetches);
    await withStore(db, async (s) => {
      expect(await diffAgainstTruth(s.db, truth)).toEqual([]);
      expect(await integrityProblems(s.db)).toEqual([]);
    });
  });

  it('detailFetch always: Gets every call and ends equal to the same truth', async ({ sim, database: db }) => {
    const summary = await syncWith(testSettings(sim, ['app1'], db, { detailFetch: 'always' }));
    const r = summary.results[0]!;
    expect(r.status).toBe('ok');
    expect(r.callsFromList).toBe(0);
    expect(r.detailFetches).toBe(r.callsSeen);
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
  });
});
