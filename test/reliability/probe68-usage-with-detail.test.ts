import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, TEST_KEY, testConfig, testSettings } from '../helpers/harness.js';

/**
 * probe68 F6: `export billing --detail --with-usage` wrote the per-call lines and exit 0, the
 * usage comparison asked for silently not made (the detail rows have no usage columns, and the
 * service was never asked): a reader who asked "does this match the bill?" got no answer and no
 * word that there was none. The two are refused together, in one line, before anything is read.
 */
const tmp = tempDir('probe68-usage-detail-');
let sim: Simulator;
const cfg = () => join(tmp.dir, 'config.json');
beforeAll(async () => {
  sim = await startTestSim([{ appId: 'app1', calls: 200 }]);
  const db = join(tmp.dir, 'calls.db');
  expect((await syncWith(testSettings(sim, ['app1'], db))).ok).toBe(true);
  writeFileSync(cfg(), JSON.stringify(testConfig(sim, ['app1'], db)));
});
afterAll(async () => {
  await sim.close();
  tmp.cleanup();
});

describe('--with-usage is never dropped silently', () => {
  it('with --detail: refused in one line (exit 2), nothing written', async () => {
    const res = await runCli(['export', 'billing', '--config', cfg(), '--month', '2025-11', '--detail', '--with-usage'], { [KEY_ENV]: TEST_KEY });
    expect(res.stdout).toBe('');
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/--with-usage.*--detail/)]);
  });
});
