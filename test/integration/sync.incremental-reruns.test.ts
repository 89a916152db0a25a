import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { changedKeys, dumpCalls } from '../helpers/db-dump.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

const dialects = await testDialects();

describe.each(dialects)('incremental re-runs [%s]', (dialect) => {
  let sim: Simulator;
  const tmp = tempDir();
  const dbs = databaseFactory(dialect, tmp.dir);
  let db: string;
  beforeAll(async () => {
    db = await dbs.fresh('inc');
    sim = await startTestSim([{ calls: 2000 }]);
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('a re-run with nothing new makes zero Get Call requests and changes nothing', async () => {
    const settings = testSettings(sim, ['app1'], db);
    expect((await syncWith(settings)).ok).toBe(true);
    const before = await withStore(db, (s) => dumpCalls(s.db, 'app1'));
    sim.resetStats();
    const again = (await syncWith(settings)).results[0]!;
    expect(again.mode).toBe('incremental');
    expect(again.status).toBe('ok');
    expect(sim.stats('app1').get).toBe(0);
    expect(again.detailFetches).toBe(0);
    expect(again.callsWritten).toBe(0);
    // Only the lookback window is re-listed, not the whole history.
    expect(sim.stats('app1').list).toBeLessThan(Math.ceil(2000 / 100) / 2);
    const after = await withStore(db, (s) => dumpCalls(s.db, 'app1'));
    expect(changedKeys(before, after)).toEqual([]);
  });

  it('a re-run after changes applies exactly those changes', async () => {
    const settings = testSettings(sim, ['app1'], db);
    const before = await withStore(db, (s) => dumpCalls(s.db, 'app1'));
    const change = sim.advance('app1', { endOngoing: true, addRecordings: 3, newCalls: 25 });
    expect(change.recorded.length).toBe(3);
    expect(change.added.length).toBe(25);
    sim.resetStats();
    const r = (await syncWith(settings)).results[0]!;
    expect(r.status).toBe('ok');
    const expected = [...new Set([...change.ended, ...change.recorded, ...change.added])].sort();
    const after = await withStore(db, (s) => dumpCalls(s.db, 'app1'));
    expect(changedKeys(before, after)).toEqual(expected);
    expect(r.callsWritten).toBe(expected.length);
    // Changed calls that the list shows complete need no Get; the rest need exactly one each.
    expect(sim.stats('app1').get).toBeLessThanOrEqual(expected.length);
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
  });
});
