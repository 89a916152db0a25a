import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { collect, runCli, spawnCli, type CliResult } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, TEST_KEY, testConfig, testSettings } from '../helpers/harness.js';

/** Issue 14, "rough edges": each case runs the real CLI as a subprocess against a synced SQLite file. */

/** Runs the CLI and closes the read end of its stdout after the first chunk, as `| head -1` does. */
async function runIntoClosedPipe(args: string[]): Promise<CliResult & { received: number }> {
  const child = spawnCli(args);
  let received = 0;
  child.stdout!.once('data', (d: Buffer) => {
    received = d.length;
    child.stdout!.destroy();
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  return { code, signal: null, stdout: '', stderr, received };
}

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

const oneLine = (r: CliResult): string[] => r.stderr.trim().split('\n');

describe('reader commands: rough edges', () => {
  const tmp = tempDir();
  const db = join(tmp.dir, 'calls.db');
  const cfg = join(tmp.dir, 'callsync.config.json');
  let sim: Simulator;
  let runError: string;

  beforeAll(async () => {
    sim = await startTestSim([{ appId: 'app1', calls: 3000 }]);
    expect((await syncWith(testSettings(sim, ['app1'], db))).ok).toBe(true);
    // A second sync with a refused key leaves a failed run with its error in sync_runs.
    const failed = await syncWith(testSettings(sim, ['app1'], db, {}, { [KEY_ENV]: 'wrong-key-0000000000000000' }));
    expect(failed.ok).toBe(false);
    runError = failed.results[0]!.error!;
    expect(runError.length).toBeGreaterThan(40);
    // A third, good sync: the app's last run is ok again, so exports do not mark it stale (the
    // failed run stays in `runs` for the width checks).
    expect((await syncWith(testSettings(sim, ['app1'], db))).ok).toBe(true);
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
  }, 120_000);
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  describe('a closed stdout (| head) ends the command quietly, exit 0', () => {
    const cases: [string, string[]][] = [
      ['query', ['query', '--database', db, '--format', 'csv', '--limit', '0', 'select * from calls']],
      ['export billing --detail', ['export', 'billing', '--database', db, '--from', '2020-01-01', '--to', '2030-01-01', '--detail']],
      ['reconcile', ['reconcile', '--database', db, '--limit', '100000']],
    ];
    it.each(cases)('%s', async (_name, args) => {
      // The command's whole output is well over a pipe's buffer: it is still writing when the reader goes.
      const full = await runCli(args);
      expect(full.code).toBe(0);
      expect(full.stdout.length).toBeGreaterThan(128 * 1024); // a pipe holds 64 KiB
      const r = await runIntoClosedPipe(args);
      expect(r.received).toBeGreaterThan(0);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    });
  });

  describe('runs and reconcile fit the width; JSON keeps the full text', () => {
    const width = (text: string): number => Math.max(...text.split('\n').map((l) => [...l].length));
    it('runs: no line wider than COLUMNS, the error whole in --format json', async () => {
      const table = await runCli(['runs', '--database', db], { COLUMNS: '100' });
      expect(table.code).toBe(0);
      expect(width(table.stdout)).toBeLessThanOrEqual(100);
      expect(table.stdout).toContain('failed');
      const wide = await runCli(['runs', '--database', db], { COLUMNS: '250' });
      expect(width(wide.stdout)).toBeLessThanOrEqual(250);
      expect(wide.stdout).toContain('…');
      const json = await runCli(['runs', '--database', db, '--format', 'json'], { COLUMNS: '100' });
      const runs = JSON.parse(json.stdout) as { status: string; error: string | null }[];
      expect(runs.find((r) => r.status === 'failed')!.error).toBe(runError);
    });
    it('reconcile: no line wider than COLUMNS', async () => {
      for (const cols of ['80', '100', '160']) {
        const r = await runCli(['reconcile', '--database', db], { COLUMNS: cols });
        expect(r.code).toBe(0);
        expect(width(r.stdout)).toBeLessThanOrEqual(Number(cols));
      }
      const json = JSON.parse((await runCli(['reconcile', '--database', db, '--format', 'json'])).stdout) as { mismatches: { issues: string }[] };
      expect(json.mismatches.length).toBeGreaterThan(0);
    });
  });

  it('reconcile --format csv is one CSV: a section column, summary rows then mismatch rows', async () => {
    const csv = await runCli(['reconcile', '--database', db, '--format', 'csv']);
    const json = JSON.parse((await runCli(['reconcile', '--database', db, '--format', 'json'])).stdout) as { summary: unknown[]; mismatches: { session_id: string }[] };
    expect(csv.code).toBe(0);
    const records = parse(csv.stdout, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)[0]).toBe('section');
    expect(records.filter((r) => r.section === 'summary')).toHaveLength(json.summary.length);
    const mismatches = records.filter((r) => r.section === 'mismatch');
    expect(mismatches.map((r) => r.session_id)).toEqual(json.mismatches.map((m) => m.session_id));
    expect(records.length).toBe(json.summary.length + json.mismatches.length);
  });

  it('an unreachable PostgreSQL names host and port, never the password, exit 2', async () => {
    const port = await closedPort();
    const url = `postgres://someone:s3cret-pw@127.0.0.1:${port}/callsync`;
    for (const args of [['runs'], ['export', 'billing', '--month', '2025-11'], ['reconcile'], ['report', '--month', '2025-11', '--out', join(tmp.dir, 'r.html')], ['query', 'select 1']]) {
      const r = await runCli([...args, '--database', url]);
      expect([args[0], r.code]).toEqual([args[0], 2]);
      expect(oneLine(r)).toEqual([`callsync: cannot reach the PostgreSQL database at 127.0.0.1:${port} (connection refused): check it is running and the URL in \`database\` (or --database)`]);
      expect(r.stderr).not.toContain('s3cret');
    }
  });

  it('an unknown --app is refused in one line naming the apps there, exit 2', async () => {
    for (const args of [
      ['export', 'billing', '--month', '2025-11', '--app', 'app9'],
      ['reconcile', '--app', 'app9'],
      ['runs', '--app', 'app9'],
      ['report', '--month', '2025-11', '--app', 'app9', '--out', join(tmp.dir, 'x.html')],
    ]) {
      const r = await runCli([...args, '--database', db]);
      expect([args[0], r.code, r.stdout]).toEqual([args[0], 2, '']);
      expect(oneLine(r)).toEqual([`callsync: --app app9: no such app in the database ${db} (apps in it: app1)`]);
    }
    expect(existsSync(join(tmp.dir, 'x.html'))).toBe(false);
  });

  it('impossible dates are refused in one line, exit 2', async () => {
    const cases: [string[], string][] = [
      [['export', 'billing', '--from', '2025-02-30', '--to', '2025-03-05'], '--from "2025-02-30": there is no day 30 in 2025-02 (it has 28 days)'],
      [['export', 'billing', '--from', '2025-11-01', '--to', '2025-11-31'], '--to "2025-11-31": there is no day 31 in 2025-11 (it has 30 days)'],
      [['export', 'billing', '--month', '2025-13'], '--month "2025-13": there is no month 13'],
      [['report', '--from', '2025-02-29', '--to', '2025-03-02', '--out', '-'], '--from "2025-02-29": there is no day 29 in 2025-02'],
      [['reconcile', '--from', '2025-11-31'], '--from "2025-11-31": there is no day 31 in 2025-11'],
      [['reconcile', '--to', '2025-13-01'], '--to "2025-13-01": there is no month 13'],
      [['verify', '--since', '2025-02-30', '--config', cfg], '--since "2025-02-30"'],
    ];
    for (const [args, text] of cases) {
      const r = await runCli([...args, '--database', db], { [KEY_ENV]: TEST_KEY });
      expect([args.join(' '), r.code, r.stdout]).toEqual([args.join(' '), 2, '']);
      expect(oneLine(r)).toHaveLength(1);
      expect(r.stderr).toContain(text);
    }
    // A leap day is a day.
    expect((await runCli(['export', 'billing', '--from', '2024-02-29', '--to', '2024-03-01', '--database', db])).code).toBe(0);
  });

  it('a period without calls says so on stderr, exit 0, the (empty) output still written', async () => {
    const csv = await runCli(['export', 'billing', '--month', '2026-10', '--database', db]);
    expect(csv.code).toBe(0);
    expect(csv.stdout.split('\r\n')[0]).toMatch(/^period,/);
    expect(oneLine(csv)).toHaveLength(1);
    expect(csv.stderr).toMatch(/^callsync: no calls in 2026-10 \(UTC\) for any app; the database holds calls from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\n$/);
    const out = join(tmp.dir, 'empty.html');
    const report = await runCli(['report', '--month', '2026-10', '--app', 'app1', '--database', db, '--out', out]);
    expect(report.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    expect(report.stderr).toMatch(/^callsync: no calls in 2026-10 \(UTC\) for app app1; the database holds calls from /);
    // A period with calls says nothing of the kind.
    expect((await runCli(['export', 'billing', '--month', '2025-11', '--database', db])).stderr).toBe('');
  });

  it('export billing --with-usage with a refused key: exit 1, one line naming app and region, nothing written', async () => {
    const out = join(tmp.dir, 'usage.csv');
    const r = await runCli(['export', 'billing', '--month', '2025-11', '--with-usage', '--config', cfg, '--out', out], { [KEY_ENV]: 'wrong-key-0000000000000000' });
    expect(r.code).toBe(1);
    expect(oneLine(r)).toHaveLength(1);
    expect(r.stderr).toMatch(/^callsync: export billing --with-usage: app app1 \(us\): .*nothing written/);
    expect(r.stderr).not.toContain('wrong-key');
    expect(existsSync(out)).toBe(false);
    // With the right key it is written, exit 0.
    const ok = await runCli(['export', 'billing', '--month', '2025-11', '--with-usage', '--config', cfg, '--out', out], { [KEY_ENV]: TEST_KEY });
    expect([ok.code, ok.stderr]).toEqual([0, '']);
    expect(readFileSync(out, 'utf8')).toContain('usage_audio_minutes');
  });
});
