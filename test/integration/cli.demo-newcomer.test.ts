import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { parse as parseCsv } from 'csv-parse/sync';
import { parse as parseJsonc } from 'jsonc-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { collect, runCli, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';

/**
 * The newcomer's path (issue 14): `demo` in a fresh folder, then the data commands with no flags,
 * a second demo run, and `simulate --demo` + `sync` with the config the demo left behind.
 */

interface DemoRecord {
  now: number;
  port: number;
  database: string;
  apps: { appId: string; region: 'us' | 'eu' | 'in'; calls: number; seed: number }[];
}

/** A port free right now (the demo's config must point somewhere that is not 4500 on a shared machine). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function lastMonth(now: number): { label: string; start: number; end: number } {
  const d = new Date(now * 1000);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1) / 1000;
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  const s = new Date(start * 1000);
  return { label: `${s.getUTCFullYear()}-${String(s.getUTCMonth() + 1).padStart(2, '0')}`, start, end };
}

/** "(2 list, 0 get, 56 members)" of each app's summary line. */
function getCounts(stdout: string): number[] {
  return [...stdout.matchAll(/requests \(\d+ list, (\d+) get,/g)].map((m) => Number(m[1]));
}

describe('the demo leaves a working setup behind', () => {
  const tmp = tempDir('callsync-demo-');
  const dir = tmp.dir;
  afterAll(() => tmp.cleanup());

  it('demo in a fresh folder, then query, report and export with no flags show last month', { timeout: 180_000 }, async () => {
    const port = await freePort();
    const before = Math.floor(Date.now() / 3_600_000) * 3600;
    const demo = await runCli(['demo', '--calls', '600', '--simulator-port', String(port)], {}, dir);
    const after = Math.floor(Date.now() / 3_600_000) * 3600;
    expect(demo.stderr).toBe('');
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain('What is in the database now:');
    expect(demo.stdout).toContain('Wrote callsync.config.json');
    expect(demo.stdout).not.toContain('sqlite3 ');

    // The simulator's clock is the current hour, recorded beside the database.
    const record = JSON.parse(readFileSync(join(dir, 'data', 'demo-simulator.json'), 'utf8')) as DemoRecord;
    expect([before, after]).toContain(record.now);
    expect(record.port).toBe(port);
    const month = lastMonth(record.now);
    expect(demo.stdout).toContain(`npx callsync query "select type, status, count(*) from calls group by 1, 2"`);
    expect(demo.stdout).toContain(`npx callsync report --month ${month.label}`);
    expect(demo.stdout).toContain(`npx callsync export billing --month ${month.label}`);
    expect(demo.stdout).toContain('npx callsync simulate --demo');
    expect(demo.stdout).toContain('CALLSYNC_SIM_API_KEY=simulator-key npx callsync sync');

    // The config is JSONC with comments, pointing at the demo database and the simulator's port.
    const configText = readFileSync(join(dir, 'callsync.config.json'), 'utf8');
    expect(configText).toMatch(/^\/\/ /m);
    const config = parseJsonc(configText) as { database: string; apps: { appId: string; apiKeyEnv: string; callsBaseUrl: string; chatBaseUrl: string }[] };
    expect(config.database).toBe('data/demo.db');
    expect(config.apps.map((a) => a.appId)).toEqual(['demo-app', 'demo-eu']);
    expect(config.apps[0]).toMatchObject({ apiKeyEnv: 'CALLSYNC_SIM_API_KEY', callsBaseUrl: `http://127.0.0.1:${port}/demo-app.call-us/v3`, chatBaseUrl: `http://127.0.0.1:${port}/demo-app.api-us/v3` });

    // Ground truth: the same simulator the demo recorded.
    const sim = await startSimulator({ apps: record.apps.map((a) => ({ ...a, apiKey: 'k' })), now: record.now });
    const truthInMonth = new Map<string, number>();
    let truthTotal = 0;
    try {
      for (const app of record.apps) {
        for (const c of sim.truthCalls(app.appId)) {
          truthTotal++;
          if (c.startedAt !== null && c.startedAt >= month.start && c.startedAt < month.end) {
            const key = `${app.appId}/${c.type}`;
            truthInMonth.set(key, (truthInMonth.get(key) ?? 0) + 1);
          }
        }
      }
    } finally {
      await sim.close();
    }
    const monthTotal = [...truthInMonth.values()].reduce((s, n) => s + n, 0);
    expect(monthTotal).toBeGreaterThan(0);

    const query = await runCli(['query', 'select count(*) as n from calls', '--format', 'json'], {}, dir);
    expect(query.stderr).toBe('');
    expect(query.code).toBe(0);
    expect(JSON.parse(query.stdout)).toEqual([{ n: truthTotal }]);

    const report = await runCli(['report', '--month', month.label], {}, dir);
    expect(report.stderr).toBe('');
    expect(report.code).toBe(0);
    expect(report.stdout).toContain(`report-${month.label}.html: report ${month.label} (UTC), 2 app(s), ${monthTotal} calls`);
    expect(existsSync(join(dir, `report-${month.label}.html`))).toBe(true);

    const billing = await runCli(['export', 'billing', '--month', month.label], {}, dir);
    expect(billing.stderr).toBe('');
    expect(billing.code).toBe(0);
    const rows = parseCsv(billing.stdout, { columns: true }) as { app_id: string; type: string; calls: string }[];
    const perType = new Map(rows.filter((r) => r.type !== 'all').map((r) => [`${r.app_id}/${r.type}`, Number(r.calls)]));
    expect(perType).toEqual(truthInMonth);

    // The database holds what the truth says for last month too (not only the commands' view of it).
    const db = new SqliteDatabase(join(dir, 'data', 'demo.db'), { readonly: true });
    try {
      const n = (db.prepare('select count(*) as n from calls where started_at >= ? and started_at < ?').get(month.start, month.end) as { n: number }).n;
      expect(n).toBe(monthTotal);
    } finally {
      db.close();
    }
  });

  it('a second demo run reuses the recorded simulator: incremental, no Get Call', { timeout: 120_000 }, async () => {
    const again = await runCli(['demo', '--calls', '600'], {}, dir);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout.match(/: ok \[incremental\]/g)).toHaveLength(2);
    expect(getCounts(again.stdout)).toEqual([0, 0]);
    expect(again.stdout).toContain('callsync.config.json exists already and was left as it is');
  });

  it('`simulate --demo` serves the demo data: the printed sync command is incremental, ok, no Get Call', { timeout: 120_000 }, async () => {
    const sim = spawnCli(['simulate', '--demo'], {}, dir);
    const done = collect(sim);
    let out = '';
    sim.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const deadline = Date.now() + 30_000;
      while (!out.includes('Stop it with Ctrl-C.')) {
        if (Date.now() > deadline || sim.exitCode !== null) throw new Error(`simulate --demo did not start: ${out}`);
        await delay(20);
      }
      const record = JSON.parse(readFileSync(join(dir, 'data', 'demo-simulator.json'), 'utf8')) as DemoRecord;
      expect(out).toContain(`listening on http://127.0.0.1:${record.port} (its clock: ${new Date(record.now * 1000).toISOString()}`);
      const sync = await runCli(['sync'], { CALLSYNC_SIM_API_KEY: 'simulator-key' }, dir);
      expect(sync.code).toBe(0);
      expect(sync.stdout.match(/: ok \[incremental\]/g)).toHaveLength(2);
      expect(getCounts(sync.stdout)).toEqual([0, 0]);
    } finally {
      sim.kill('SIGTERM');
      await done;
    }
  });

  it('an existing config is never overwritten: the closing lines name the database instead', { timeout: 120_000 }, async () => {
    const before = readFileSync(join(dir, 'callsync.config.json'), 'utf8');
    const other = await runCli(['demo', '--calls', '50', '--database', 'data/other.db'], {}, dir);
    expect(other.code).toBe(0);
    expect(readFileSync(join(dir, 'callsync.config.json'), 'utf8')).toBe(before);
    expect(other.stdout).toContain('callsync.config.json exists already and was left as it is');
    expect(other.stdout).toContain('npx callsync query "select type, status, count(*) from calls group by 1, 2" --database data/other.db');
    expect(other.stdout).toContain('npx callsync simulate --demo --demo-file data/other-simulator.json');
    expect(existsSync(join(dir, 'data', 'other-simulator.json'))).toBe(true);
    const month = lastMonth((JSON.parse(readFileSync(join(dir, 'data', 'other-simulator.json'), 'utf8')) as DemoRecord).now).label;
    const report = await runCli(['report', '--month', month, '--database', 'data/other.db'], {}, dir);
    expect(report.code).toBe(0);
  });
});
