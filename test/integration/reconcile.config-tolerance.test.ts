import { describe, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY } from '../helpers/harness.js';

interface Report {
  tolerance: number;
  mismatchCount: number;
}

/**
 * `reconcile` applies the tolerance of the config it reads (flag > config > the database's), not
 * the one the last sync stored: a config changed after a sync applies at once (issue 15).
 */
describe('reconcile follows the config tolerance, not the last sync', () => {
  test.override({ simApps: [{ calls: 1500 }] });
  let cfg: string;
  let writeConfig: (tolerance: number) => void;
  const reconcile = async (...extra: string[]): Promise<Report> => {
    const res = await runCli(['reconcile', '--config', cfg, '--format', 'json', ...extra]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    return JSON.parse(res.stdout) as Report;
  };
  test.beforeEach(async ({ writeConfig: write }) => {
    writeConfig = (tolerance) => {
      cfg = write({ reconcileToleranceMinutes: tolerance }, 'callsync.config.json');
    };
    writeConfig(0.01);
    const sync = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
    expect(sync.code).toBe(0);
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
