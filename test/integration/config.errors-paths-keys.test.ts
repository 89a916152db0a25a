import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig } from '../helpers/harness.js';

describe('config problems are found before any work', () => {
  let sim: Simulator;
  const tmp = tempDir('callsync-cfg-');
  beforeAll(async () => {
    sim = await startTestSim([{ appId: 'app1', calls: 120 }, { appId: 'app2', calls: 50 }, { appId: 'app3', calls: 50 }]);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  }, 120_000);

  it('reports every bad field at once, one plain line each, exit 2', async () => {
    const cfg = join(tmp.dir, 'bad.jsonc');
    writeFileSync(cfg, `{\n  // three mistakes\n  "apps": [{ "appId": "app1", "region": "uk", "apiKeyEnv": "K" }],\n  "concurrency": "abc",\n  "pageSzie": 10,\n}\n`);
    const res = await runCli(['sync', '--config', cfg]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n').sort()).toEqual(
      [
        `callsync: ${cfg}: apps[0].region: must be one of us, eu, in (got "uk")`,
        `callsync: ${cfg}: concurrency: expected a whole number from 1 to 64 (got "abc")`,
        `callsync: ${cfg}: (top level): unknown field "pageSzie" (did you mean "pageSize"?); remove it or fix its name (the fields are in the README)`,
      ].sort(),
    );
  }, 120_000);

  it('resolves a relative database against the config file\'s folder, whatever the current folder', async () => {
    const dir = join(tmp.dir, 'project');
    mkdirSync(dir);
    const cfg = join(dir, 'callsync.config.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], 'data/calls.db')));
    const elsewhere = join(tmp.dir, 'elsewhere');
    mkdirSync(elsewhere);
    const res = await runCli(['sync', '--config', cfg, '--quiet'], { [KEY_ENV]: TEST_KEY }, elsewhere);
    expect(res.code, res.stderr).toBe(0);
    expect(existsSync(join(dir, 'data', 'calls.db'))).toBe(true);
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
    // Read commands from a third folder find the same database.
    const q = await runCli(['query', '--config', cfg, '--format', 'json', 'select count(*) as n from calls'], {}, tmp.dir);
    expect(q.code, q.stderr).toBe(0);
    expect((JSON.parse(q.stdout) as { n: number }[])[0]!.n).toBeGreaterThan(0);
    const st = await runCli(['status', '--config', cfg, '--format', 'json'], {}, tmp.dir);
    expect(st.code, st.stderr).toBe(0);
    expect((JSON.parse(st.stdout) as { apps: { calls: number }[] }).apps[0]!.calls).toBeGreaterThan(0);
    // A path typed in the shell stays relative to the current folder.
    const flag = await runCli(['sync', '--config', cfg, '--quiet', '--database', 'flag.db'], { [KEY_ENV]: TEST_KEY }, elsewhere);
    expect(flag.code, flag.stderr).toBe(0);
    expect(existsSync(join(elsewhere, 'flag.db'))).toBe(true);
  }, 120_000);

  it('a missing API key variable stops sync before any request, naming each variable once', async () => {
    const cfg = join(tmp.dir, 'keys.json');
    const base = testConfig(sim, ['app1', 'app2', 'app3'], join(tmp.dir, 'keys.db'));
    const apps = (base.apps as Record<string, unknown>[]).map((a, i) => ({ ...a, apiKeyEnv: ['KEY_SET', 'KEY_UNSET_B', 'KEY_UNSET_C'][i] }));
    writeFileSync(cfg, JSON.stringify({ ...base, apps }));
    const before = ['app1', 'app2', 'app3'].map((a) => sim.stats(a).requests);
    const res = await runCli(['sync', '--config', cfg], { KEY_SET: TEST_KEY });
    expect(res.code).toBe(2);
    const lines = res.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^callsync: environment variable KEY_UNSET_B is not set \(the REST API key of app app2 \(us\)\); export the key/);
    expect(lines[1]).toMatch(/^callsync: environment variable KEY_UNSET_C is not set \(the REST API key of app app3 \(us\)\)/);
    expect(['app1', 'app2', 'app3'].map((a) => sim.stats(a).requests)).toEqual(before);
    expect(existsSync(join(tmp.dir, 'keys.db'))).toBe(false);
    // The apps asked for are the ones that need a key.
    const one = await runCli(['sync', '--config', cfg, '--app', 'app1', '--quiet'], { KEY_SET: TEST_KEY });
    expect(one.code, one.stderr).toBe(0);
    const sched = await runCli(['schedule', '--config', cfg, '--run-now'], { KEY_SET: TEST_KEY });
    expect(sched.code).toBe(2);
    expect(sched.stderr).toContain('KEY_UNSET_B is not set');
  }, 120_000);
});
