import { hostname } from 'node:os';
import { describe, expect } from 'vitest';
import { appLockKey, withAdvisoryLock } from '../../src/store/app-lock.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { ChildProcess } from 'node:child_process';
import { collect, runCli, spawnCli, type CliResult } from '../helpers/cli.js';
import { testDialects, type TestDialect } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, withStore } from '../helpers/harness.js';
import { countIn, waitFor } from '../helpers/watch-sqlite.js';

interface StatusJson {
  healthy: boolean;
  apps: { app_id: string; last_run_status: string | null; last_run_error: string | null }[];
}

/** `callsync sync` started as a subprocess and seen storing its first calls, still running. */
async function syncUnderWay(cfg: string, db: string, then: string): Promise<{ child: ChildProcess; done: Promise<CliResult> }> {
  const child = spawnCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
  const done = collect(child);
  await waitFor(() => countIn(db, 'select count(*) as n from calls') > 0 || child.exitCode !== null, 'the sync to store its first calls');
  expect(child.exitCode, `the sync ended before it could be ${then} mid-run`).toBeNull();
  return { child, done };
}

describe('a sync killed with SIGKILL: status and runs show its run abandoned at once', () => {
  const env = { [KEY_ENV]: TEST_KEY };
  // Latency on every answer and a Get Call per call stretch the sync to a minute or more: it is met mid-run.
  test.override({ simApps: [{ calls: 1500 }], simFaults: { latencyMs: 40 } });

  it('while the sync runs it is healthy and running; after SIGKILL, abandoned and exit 1', async ({ database: db, writeConfig }) => {
    const cfg = writeConfig({ detailFetch: 'always', concurrency: 1 }, 'killed.json');
    const { child, done } = await syncUnderWay(cfg, db, 'observed');

    // A genuinely running sync is not abandoned.
    const live = await runCli(['status', '--config', cfg, '--format', 'json'], env);
    const liveRuns = await runCli(['runs', '--config', cfg, '--format', 'json'], env);
    expect(child.exitCode, 'the sync ended while status ran: the live check proved nothing').toBeNull();
    expect(live.code, live.stderr).toBe(0);
    expect((JSON.parse(live.stdout) as StatusJson).apps.map((a) => [a.app_id, a.last_run_status])).toEqual([['app1', 'running']]);
    expect((JSON.parse(liveRuns.stdout) as { status: string }[]).map((r) => r.status)).toEqual(['running']);

    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    // Nothing wrote to the database since: the row still says 'running'.
    expect(countIn(db, "select count(*) as n from sync_runs where status = 'running'")).toBe(1);

    const status = await runCli(['status', '--config', cfg], env);
    expect(status.code, status.stderr).toBe(1);
    expect(status.stdout).toContain(`ABANDONED: app1 (us): the process running it (pid ${child.pid} on ${hostname()}) is gone`);
    expect(status.stdout).toMatch(/^UNHEALTHY: the last run did not succeed: app1 \(us\) abandoned$/m);
    const json = JSON.parse((await runCli(['status', '--config', cfg, '--format', 'json'], env)).stdout) as StatusJson;
    expect(json.healthy).toBe(false);
    expect(json.apps[0]!.last_run_status).toBe('abandoned');

    const runs = await runCli(['runs', '--config', cfg, '--format', 'json'], env);
    expect(runs.code, runs.stderr).toBe(0);
    expect((JSON.parse(runs.stdout) as { status: string }[]).map((r) => r.status)).toEqual(['abandoned']);
    // The table (fitted to 100 columns off a terminal) says so too.
    const table = await runCli(['runs', '--config', cfg], env);
    expect(table.stdout).toMatch(/\babandoned\b/);
    expect(table.stdout).not.toMatch(/status +\| running\b|│ running +│/);
  }, 90_000);

  // Probe round 16 (c, F1): an interrupted last run (SIGTERM, or a worker's job expiry) read as healthy, exit 0.
  it('after SIGTERM mid-run: the run is interrupted, and status says unhealthy, exit 1', async ({ database: db, writeConfig }) => {
    const cfg = writeConfig({ detailFetch: 'always', concurrency: 1 }, 'stopped.json');
    const { child, done } = await syncUnderWay(cfg, db, 'stopped');
    child.kill('SIGTERM');
    expect((await done).code).toBe(5);
    expect(countIn(db, "select count(*) as n from sync_runs where status = 'interrupted'")).toBe(1);
    const status = await runCli(['status', '--config', cfg], env);
    expect(status.code, status.stdout).toBe(1);
    expect(status.stdout).toMatch(/^UNHEALTHY: the last run did not succeed: app1 \(us\) interrupted$/m);
    expect((JSON.parse((await runCli(['status', '--config', cfg, '--format', 'json'], env)).stdout) as StatusJson).healthy).toBe(false);
  }, 90_000);
});

const dialects: TestDialect[] = await testDialects();

/** A run of another machine cannot be checked by pid: on SQLite its lease tells (renewed while its process works). */
describe.each(dialects.filter((d) => d === 'sqlite'))('a running run of another host, judged by its lease (%s)', (dialect) => {
  test.override({ dialect });

  async function seed(url: string, expiresInMs: number): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    await withStore(url, async (s) => {
      await migrateToLatest(s.db);
      await s.db.insertInto('sync_runs').values({ run_id: 'r1', app_id: 'app1', region: 'us', mode: 'full', started_at: now - 60, status: 'running', pid: 4242, host: 'other-host' }).execute();
      await s.db.insertInto('leases').values({ name: 'sync', holder: 'h1', pid: 4242, host: 'other-host', acquired_at: now - 60, renewed_at: now - 30, expires_at: Date.now() + expiresInMs }).execute();
    });
    return url;
  }

  it('a live lease: still running, healthy', async ({ database, dir }) => {
    const url = await seed(database, 600_000);
    const r = await runCli(['status', '--database', url, '--format', 'json'], {}, dir);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as StatusJson).apps.map((a) => a.last_run_status)).toEqual(['running']);
  });

  it('an expired lease: abandoned, exit 1, and runs says so', async ({ database, dir }) => {
    const url = await seed(database, -5_000);
    const r = await runCli(['status', '--database', url], {}, dir);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^ABANDONED: app1 \(us\): its lease expired at .*the process running it \(pid 4242 on other-host\) stopped renewing it/m);
    const runs = await runCli(['runs', '--database', url, '--format', 'json'], {}, dir);
    expect((JSON.parse(runs.stdout) as { status: string; error: string }[]).map((x) => x.status)).toEqual(['abandoned']);
  });
});

/** On PostgreSQL a run is alive while some session holds its app's advisory lock (store/app-lock.ts). */
describe.each(dialects.filter((d) => d === 'postgres'))('a running run of another host, judged by its app lock (%s)', (dialect) => {
  test.override({ dialect });

  async function seed(url: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    await withStore(url, async (s) => {
      await migrateToLatest(s.db);
      await s.db.insertInto('sync_runs').values({ run_id: 'r1', app_id: 'app1', region: 'us', mode: 'full', started_at: now - 60, status: 'running', pid: 4242, host: 'other-host' }).execute();
    });
    return url;
  }

  it('its lock held by a live session: still running, healthy', async ({ database, dir }) => {
    const url = await seed(database);
    // Another process holds the app's lock for the length of the check (as a worker syncing it would).
    await withStore(url, async (s) => {
      const held = await withAdvisoryLock(s.db, appLockKey('app1', 'us'), async () => {
        const r = await runCli(['status', '--database', url, '--format', 'json'], {}, dir);
        expect(r.code, r.stderr).toBe(0);
        expect((JSON.parse(r.stdout) as StatusJson).apps.map((a) => a.last_run_status)).toEqual(['running']);
      });
      expect(held.locked).toBe(true);
    });
  });

  it('no session holds its lock: abandoned, exit 1, and runs says so', async ({ database, dir }) => {
    const url = await seed(database);
    const r = await runCli(['status', '--database', url], {}, dir);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^ABANDONED: app1 \(us\): no session holds its app's lock: the process running it \(pid 4242 on other-host\) stopped/m);
    const runs = await runCli(['runs', '--database', url, '--format', 'json'], {}, dir);
    expect((JSON.parse(runs.stdout) as { status: string; error: string }[]).map((x) => x.status)).toEqual(['abandoned']);
  });
});
