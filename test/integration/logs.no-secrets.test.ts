import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, tempDir, testConfig } from '../helpers/harness.js';

const KEY = 'sk-live-RECOGNISABLE-9f8e7d6c5b4a';

describe('structured logs and config check never show a key', () => {
  let sim: Simulator;
  const tmp = tempDir();
  beforeAll(async () => {
    sim = await startTestSim([{ calls: 300, apiKey: KEY }]);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('logs JSON with a run id on every line, at trace level, without the key', async () => {
    const cfg = join(tmp.dir, 'c.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], join(tmp.dir, 'db.sqlite'))));
    const res = await runCli(['sync', '--config', cfg, '--log-level', 'trace'], { [KEY_ENV]: KEY });
    expect(res.code).toBe(0);
    const lines = res.stderr.trim().split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const entry = JSON.parse(line) as { runId?: string; level: number };
      expect(entry.runId).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(res.stdout + res.stderr).not.toContain(KEY);
    expect(readFileSync(join(tmp.dir, 'db.sqlite')).includes(KEY)).toBe(false);
  });

  it('config check prints *** and says which key variables are missing', async () => {
    const cfg = join(tmp.dir, 'check.json');
    writeFileSync(cfg, JSON.stringify({ ...testConfig(sim, ['app1'], join(tmp.dir, 'x.db')), apps: [...(testConfig(sim, ['app1'], 'x').apps as object[]), { appId: 'app2', region: 'eu', apiKeyEnv: 'NOT_SET_KEY' }] }));
    const res = await runCli(['config', 'check', '--config', cfg], { [KEY_ENV]: KEY });
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('"apiKey": "***"');
    expect(res.stderr).toContain('app app2 (eu): environment variable NOT_SET_KEY is not set');
    expect(res.stdout + res.stderr).not.toContain(KEY);
    const ok = await runCli(['config', 'check', '--config', join(tmp.dir, 'c.json')], { [KEY_ENV]: KEY });
    expect(ok.code).toBe(0);
    const bad = await runCli(['config', 'check', '--config', cfg], { [KEY_ENV]: KEY, CALLSYNC_SCHEDULE_CRON: 'every night' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^callsync: CALLSYNC_SCHEDULE_CRON: schedule\.cron: is not a valid cron expression \(.*\); .* \(got "every night"\)$/m);
  });
});
