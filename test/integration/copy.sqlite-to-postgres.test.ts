import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

const postgres = (await testDialects()).includes('postgres');

describe.runIf(postgres)('callsync copy moves a SQLite database into PostgreSQL', () => {
  let sim: Simulator;
  const tmp = tempDir();
  const dbs = databaseFactory('postgres', tmp.dir);
  beforeAll(async () => {
    sim = await startTestSim([{ calls: 1500 }], { notFoundCalls: 3, malformedCalls: 2, details: { transcriptions: true } });
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('copies every row, keeps working as the destination, and can be re-run', async () => {
    const file = join(tmp.dir, 'source.db');
    expect((await syncWith(testSettings(sim, ['app1'], file))).ok).toBe(true);
    const url = await dbs.fresh('copy');
    const res = await runCli(['copy', '--from', file, '--to', url]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const n = sim.truth('app1').calls.size;
    expect(res.stdout).toContain(`calls: ${n} rows copied, ${n} in the target`);
    expect(res.stdout).toMatch(/^rejected_records: 2 rows copied, 2 in the target$/m);
    await withStore(url, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
    const again = await runCli(['copy', '--from', file, '--to', url]);
    expect(again.code).toBe(0);
    // The copy is a working destination: an incremental sync continues from the copied watermark.
    sim.advance('app1', { newCalls: 5 });
    const next = (await syncWith(testSettings(sim, ['app1'], url))).results[0]!;
    expect(next.mode).toBe('incremental');
    expect(next.callsWritten).toBe(5);
    await withStore(url, async (s) => {
      expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]);
      const runs = await s.db.selectFrom('sync_runs').select('id').orderBy('id').execute();
      expect(new Set(runs.map((r) => r.id)).size).toBe(runs.length); // the id sequence moved past the copied ids
    });
  });
});
