import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, TEST_KEY, testConfig, testSettings } from '../helpers/harness.js';

/**
 * probe68 F3: `export billing --with-usage` writes nothing and exits 1 when an app's usage cannot be
 * fetched, since "usage columns left empty would read as 'the service counted nothing'" (README).
 * It asked only the apps of the config: an app whose calls the database holds but that the config no
 * longer lists (taken out, or moved to another region) got its total row with the usage columns
 * empty beside its minutes, exit 0, no word on stderr, while the configured apps' rows were filled:
 * the one unchecked app read as one the comparison had covered.
 */
const tmp = tempDir('probe68-usage-unconfigured-');
let sim: Simulator;
let db = '';
beforeAll(async () => {
  sim = await startTestSim([{ appId: 'app1', calls: 300 }, { appId: 'app2', calls: 300 }]);
  db = join(tmp.dir, 'calls.db');
  expect((await syncWith(testSettings(sim, ['app1', 'app2'], db))).ok).toBe(true);
});
afterAll(async () => {
  await sim.close();
  tmp.cleanup();
});

describe('--with-usage covers every app the export has rows for, or says which it could not', () => {
  it('an app in the database but not in the config: exit 1, a line naming it, nothing written', async () => {
    const cfg = join(tmp.dir, 'app1-only.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
    const res = await runCli(['export', 'billing', '--config', cfg, '--month', '2025-11', '--with-usage', '--format', 'json'], { [KEY_ENV]: TEST_KEY });
    expect(res.stdout).toBe('');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/app app2 \(us\): .*not in the config.*nothing written/);
    // The configured app alone, by --app: its usage compared, written, exit 0.
    const one = await runCli(['export', 'billing', '--config', cfg, '--month', '2025-11', '--with-usage', '--app', 'app1', '--format', 'json'], { [KEY_ENV]: TEST_KEY });
    expect(one.code, one.stderr).toBe(0);
    const rows = JSON.parse(one.stdout) as Record<string, unknown>[];
    expect(rows.filter((r) => r.row_kind === 'total').map((r) => [r.app_id, typeof r.usage_audio_minutes])).toEqual([['app1', 'number']]);
  });
});
