import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { collect, REPO, runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

describe('the callsync CLI as a subprocess', () => {
  let sim: Simulator;
  const tmp = tempDir();
  beforeAll(async () => {
    sim = await startTestSim([{ calls: 400 }]);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('syncs, prints one summary line per app and exits 0', async () => {
    const cfg = join(tmp.dir, 'ok.json');
    const db = join(tmp.dir, 'ok.db');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
    const res = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^app1 \(us\): ok \[full\]: \d+ pages, \d+ calls listed/);
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
    const again = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/ok \[incremental\].* 0 needed Get Call/);
  });

  it('--version and -V print the package version alone, exit 0; with a command named, too; --help still lists every command', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
    for (const args of [['--version'], ['-V'], ['sync', '--version'], ['--log-format', 'json', '--version']]) {
      const res = await runCli(args);
      expect({ args, code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual({ args, code: 0, stdout: `callsync ${version}\n`, stderr: '' });
    }
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['sync', 'reconcile', 'export', 'query', 'report', 'verify', 'demo']) expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it('runs through the bin as npm links it: bin/callsync.js executed itself, with the Node found on PATH', async () => {
    const cfg = join(tmp.dir, 'bin.json');
    const db = join(tmp.dir, 'bin.db');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
    // The Node running the tests first on PATH, as the bin's `env node` looks it up there.
    const child = spawn(join(REPO, 'bin/callsync.js'), ['sync', '--config', cfg, '--json'], {
      env: { PATH: [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter), HOME: process.env.HOME ?? '/tmp', [KEY_ENV]: TEST_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const res = await collect(child);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout.trim().split('\n')[0]!)).toMatchObject({ appId: 'app1', status: 'ok' });
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
  });

  it('exits 1 with the app named when its key is wrong, and never prints the key', async () => {
    const cfg = join(tmp.dir, 'bad.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], join(tmp.dir, 'bad.db'))));
    const res = await runCli(['sync', '--config', cfg], { [KEY_ENV]: 'not-the-key-93f1' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('app1 (us)');
    expect(res.stderr).toContain('AUTH_ERR_APIKEY_NOT_FOUND');
    expect(res.stdout + res.stderr).not.toContain('not-the-key-93f1');
  });

  it('names a bad config field in one line and exits 2', async () => {
    const cfg = join(tmp.dir, 'invalid.json');
    writeFileSync(cfg, JSON.stringify({ database: 'x.db', apps: [{ appId: 'a', region: 'mars', apiKeyEnv: 'K' }] }));
    const res = await runCli(['sync', '--config', cfg]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toContain('apps[0].region');
    const missing = await runCli(['sync', '--config', join(tmp.dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('not found');
    const valid = join(tmp.dir, 'valid.json');
    writeFileSync(valid, JSON.stringify(testConfig(sim, ['app1'], join(tmp.dir, 'valid.db'))));
    const badDate = await runCli(['sync', '--config', valid, '--since', 'last tuesday'], { [KEY_ENV]: TEST_KEY });
    expect(badDate.stderr).toContain('--since');
    expect(badDate.code).toBe(2);
    const refetchAll = await runCli(['sync', '--config', valid, '--refetch'], { [KEY_ENV]: TEST_KEY });
    expect(refetchAll.code).toBe(2);
    expect(refetchAll.stderr).toMatch(/--refetch needs a window/);
  });

  it('exits 1 with one line when the listing cannot be proved complete, and names the listing in the summary', async () => {
    const lying = await startTestSim([{ calls: 300 }], { lieTotalPages: 'high' });
    try {
      const cfg = join(tmp.dir, 'lying.json');
      writeFileSync(cfg, JSON.stringify(testConfig(lying, ['app1'], join(tmp.dir, 'lying.db'))));
      const res = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
      expect(res.code).toBe(1);
      const lines = res.stderr.trim().split('\n');
      expect(lines[0]).toMatch(/^app1 \(us\): PARTIAL \[full\]: .*listing newest-first, 300 distinct listed of 900 reported, NOT proved complete$/);
      expect(lines[1]).toMatch(/^ {2}error: app app1 \(us\): List Calls reported 900 calls but 300 distinct calls could be listed in two passes \(600 short\); the watermark was not moved/);
      expect(lines).toHaveLength(2);
    } finally {
      await lying.close();
    }
  });

  it('rejects an unknown command with usage help and exit 2', async () => {
    const res = await runCli(['synk']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown command');
  });
});
