import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig } from '../helpers/harness.js';

interface Report {
  tolerance: number;
  mismatchCount: number;
}

/**
 * `reconcile` applies the tolerance of the config it reads (flag > config > the database's), not
 * the one the last sync stored: a config changed after a sync applies at once (issue 15).
 */
describe('reconcile follows the config tolerance, not the last sync', () => {
  let sim: Simulator;
  const tmp = tempDir();
  const cfg = join(tmp.dir, 'callsync.config.json');
  const db = join(tmp.dir, 'tol.db');
  const writeConfig = (tolerance: number): void => writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db, { reconcileToleranceMinutes: tolerance })));
  const reconcile = async (...extra: string[]): Promise<Report> => {
    const res = await runCli(['reconcile', '--config', cfg, '--format', 'json', ...extra]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    return JSON.parse(res.stdout) as Report;
  };
  beforeAll(async () => {
    sim = await startTestSim([{ calls: 1500 }]);
    writeConfig(0.01);
    const sync = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
    expect(sync.code).toBe(0);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('uses the tolerance of the config as it is now, and the flag over it', async () => {
    const strict = await reconcile();
    expect(strict.tolerance).toBe(0.01);
    expect(strict.mismatchCount).toBeGreaterThan(0);
    writeConfig(60);
    const loose = await reconcile();
    expect(loose.tolerance).toBe(60);
    expect(loose.mismatchCount).toBeLessThan(strict.mismatchCount);
    const flagged = await reconcile('--tolerance', '0.01');
    expect(flagged.tolerance).toBe(0.01);
    expect(flagged.mismatchCount).toBe(strict.mismatchCount);
    // The flag applies to its one report only; the config's value is back for the next one.
    expect((await reconcile()).tolerance).toBe(60);
  });
});
