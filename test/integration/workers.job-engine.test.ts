import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { describe, expect } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { ENGINE_SCHEMA, QUEUES } from '../../src/schedule/job-engine.js';
import { latestAppJobs } from '../../src/store/job-queue-repo.js';
import { collect, runCli, spawnCli, type CliResult } from '../helpers/cli.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, testConfig, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

/**
 * `callsync schedule` on PostgreSQL: workers of the job engine (pg-boss). Every worker here is the
 * real CLI as a process; a tick is queued by `schedule --run-now`, itself a worker that exits when
 * the tick's finish job has run.
 */
const postgres = (await testDialects()).includes('postgres');
const env = { [KEY_ENV]: TEST_KEY };
const today = new Date().getUTCDate();

/** Fast engine settings for tests: retries 1 s apart; an attempt may take a minute (the kill test shortens it). */
function engineConfig(exportDir: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    detailFetch: 'always',
    concurrency: 2,
    schedule: {
      reconcile: false,
      // Today, so that each tick writes (last month's) export: the stale marking is what is checked.
      exportDayOfMonth: today <= 28 ? today : 0,
      exportDir,
      exportFormat: 'csv',
      timezone: 'UTC',
      workerConcurrency: 2,
      retryLimit: 2,
      retryDelaySeconds: 1,
      retryBackoff: false,
      jobExpirySeconds: 60,
      pollIntervalSeconds: 0.5,
      expiryCheckSeconds: 1,
    },
    ...extra,
  };
}

interface Worker {
  child: ChildProcess;
  done: Promise<CliResult>;
}

function startWorkers(n: number, cfg: string, extraEnv: Record<string, string> = {}): Worker[] {
  return Array.from({ length: n }, () => {
    const child = spawnCli(['schedule', '--config', cfg], { ...env, ...extraEnv });
    return { child, done: collect(child) };
  });
}

async function stopWorkers(workers: Worker[]): Promise<CliResult[]> {
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
  return Promise.all(workers.map((w) => w.done));
}

async function okRunsPerApp(db: string): Promise<Map<string, number>> {
  return withStore(db, async (s) => {
    const rows = await s.db.selectFrom('sync_runs').select('app_id').where('status', '=', 'ok').execute();
    const m = new Map<string, number>();
    for (const r of rows) m.set(r.app_id, (m.get(r.app_id) ?? 0) + 1);
    return m;
  });
}

/** No two runs of one app overlap in time (unix seconds; a run ending in the second another starts does not overlap). */
async function expectNoOverlap(db: string): Promise<void> {
  await withStore(db, async (s) => {
    const runs = await s.db.selectFrom('sync_runs').select(['app_id', 'started_at', 'ended_at', 'status']).where('status', '!=', 'running').execute();
    for (const a of runs) {
      for (const b of runs) {
        if (a === b || a.app_id !== b.app_id) continue;
        const overlap = a.started_at < (b.ended_at ?? Infinity) && b.started_at < (a.ended_at ?? Infinity);
        expect(overlap, `${a.app_id}: runs ${JSON.stringify(a)} and ${JSON.stringify(b)} overlap`).toBe(false);
      }
    }
  });
}

async function checkTruth(sim: Simulator, db: string, apps: readonly string[]): Promise<void> {
  await withStore(db, async (s) => {
    for (const app of apps) expect(await diffAgainstTruth(s.db, sim.truth(app)), app).toEqual([]);
  });
}

const APPS = Array.from({ length: 20 }, (_, i) => `w${String(i + 1).padStart(2, '0')}`);

describe.runIf(postgres)('three workers and twenty apps on one PostgreSQL database', () => {
  test.override({ dialect: 'postgres', simApps: APPS.map((appId, i) => ({ appId, calls: 120, seed: 100 + i })), simFaults: { latencyMs: 2 } });

  it('each tick syncs every app exactly once, split across the workers, and reaches the truth', async ({ sim, database: db, writeConfig, dir }) => {
    const cfg = writeConfig(engineConfig(join(dir, 'exports')));
    const started = Date.now();
    const workers = startWorkers(2, cfg);
    try {
      const tick1 = await runCli(['schedule', '--config', cfg, '--run-now'], env);
      expect(tick1.code, tick1.stderr).toBe(0);
      expect((tick1.stdout.match(/: ok \(attempt 1\)/g) ?? []).length).toBe(APPS.length);
      expect(tick1.stderr).not.toMatch(/STALE/);
      let perApp = await okRunsPerApp(db);
      for (const app of APPS) expect(perApp.get(app), app).toBe(1);
      const tick2 = await runCli(['schedule', '--config', cfg, '--run-now'], env);
      expect(tick2.code, tick2.stderr).toBe(0);
      perApp = await okRunsPerApp(db);
      for (const app of APPS) expect(perApp.get(app), app).toBe(2);
      await withStore(db, async (s) => {
        // The work was shared: runs were made by more than one process.
        const pids = await s.db.selectFrom('sync_runs').select('pid').distinct().execute();
        expect(pids.length).toBeGreaterThanOrEqual(2);
        const jobs = await latestAppJobs(s.db, { schema: ENGINE_SCHEMA, queue: QUEUES.app });
        expect(jobs.map((j) => `${j.app_id}:${j.state}`).sort()).toEqual(APPS.map((a) => `${a}:completed`));
      });
      await expectNoOverlap(db);
      await checkTruth(sim, db, APPS);
    } finally {
      const stopped = await stopWorkers(workers);
      for (const r of stopped) {
        expect(r.code, r.stderr).toBe(0);
        // Each worker says when the schedule (the default, 02:00 UTC) next ticks: it never said
        // (probe round 22); the SQLite scheduler did.
        const next = /ticks on 0 2 \* \* \* \(UTC\), next at (\S+);/.exec(r.stdout)?.[1];
        expect(next, r.stdout).toMatch(/T02:00:00\.000Z$/);
        expect(Date.parse(next!) - started).toBeGreaterThan(0);
        expect(Date.parse(next!) - started).toBeLessThanOrEqual(86_400_000);
      }
    }
  }, 240_000);

  it('a worker SIGKILLed mid-run loses nothing: its apps finish on the others, none twice at once', async ({ sim, database: db, writeConfig, dir }) => {
    // A dead worker's jobs (an app's, or the tick's or finish job it happened to hold) are handed on
    // at their expiry: 15 s here; more retries, as an attempt cut at its expiry under load counts as one.
    const base = engineConfig(join(dir, 'exports'));
    const cfg = writeConfig({ ...base, schedule: { ...(base.schedule as object), jobExpirySeconds: 15, retryLimit: 5 } });
    const workers = startWorkers(2, cfg);
    try {
      const tick = spawnCli(['schedule', '--config', cfg, '--run-now'], env);
      const tickDone = collect(tick);
      // Kill the first worker once it is syncing something.
      const victim = workers[0]!.child.pid!;
      for (let i = 0; i < 200; i++) {
        // Before the first worker has migrated the database there is no sync_runs table yet.
        const busy = await withStore(db, async (s) => {
          const r = await s.db.selectFrom('sync_runs').select('id').where('status', '=', 'running').where('pid', '=', victim).execute();
          return r.length > 0;
        }).catch(() => false);
        if (busy) break;
        await delay(100);
      }
      workers[0]!.child.kill('SIGKILL');
      // Should the tick not end, fail with where the engine's jobs stand rather than time out blind.
      const result = await Promise.race([tickDone, delay(150_000).then(() => undefined)]);
      if (!result) {
        const stuck = await withStore(db, async (s) => sql<{ name: string; state: string; n: number }>`
          select name, state::text as state, count(*)::int as n from ${sql.table(`${ENGINE_SCHEMA}.job`)} group by 1, 2 order by 1, 2`.execute(s.db));
        tick.kill('SIGKILL');
        expect.fail(`the tick did not end within 150 s after the kill; engine jobs: ${JSON.stringify(stuck.rows)}`);
      }
      expect(result!.code, result!.stderr).toBe(0);
      expect((result!.stdout.match(/: ok \(attempt \d\)/g) ?? []).length).toBe(APPS.length);
      await withStore(db, async (s) => {
        const killed = await s.db.selectFrom('sync_runs').select(['app_id', 'status']).where('pid', '=', victim).where('status', '!=', 'ok').execute();
        expect(killed.length, 'the killed worker was syncing an app').toBeGreaterThan(0);
        const jobs = await latestAppJobs(s.db, { schema: ENGINE_SCHEMA, queue: QUEUES.app });
        expect(jobs.every((j) => j.state === 'completed')).toBe(true);
      });
      const perApp = await okRunsPerApp(db);
      for (const app of APPS) expect(perApp.get(app) ?? 0, app).toBeGreaterThanOrEqual(1);
      await expectNoOverlap(db);
      await checkTruth(sim, db, APPS);
      // The killed worker's run is not shown as running: its app's lock went with its connection.
      const runs = await runCli(['runs', '--config', cfg, '--format', 'json', '--limit', '200'], env);
      const shown = JSON.parse(runs.stdout) as { pid: number; status: string }[];
      expect(shown.filter((r) => r.pid === victim && r.status === 'running')).toEqual([]);
    } finally {
      await stopWorkers(workers);
    }
  }, 180_000);

  it("the engine's cron sends each slot once, however many workers run it", async ({ database: db, writeConfig, dir }) => {
    // Every minute, at a second SLOT_LEAD_S from now (a six-field cron with one second): the three
    // workers start within that lead, all wait for the same slot, and all send it. A whole-minute
    // cron ('* * * * *') had the test wait up to a minute for its slot; the config allows one slot a
    // minute, so this is the soonest slot all three can share.
    const SLOT_LEAD_S = 15;
    const second = (new Date().getUTCSeconds() + SLOT_LEAD_S) % 60;
    const base = engineConfig(join(dir, 'exports'));
    const cfg = writeConfig({ ...base, schedule: { ...(base.schedule as object), cron: `${second} * * * * *` } });
    const workers = startWorkers(3, cfg);
    try {
      let finished = false;
      for (let i = 0; i < 600 && !finished; i++) {
        await delay(200);
        finished = await withStore(db, async (s) => {
          const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(`${ENGINE_SCHEMA}.job`)} where name = ${QUEUES.finish} and state = 'completed'`.execute(s.db);
          return (r.rows[0]?.n ?? 0) > 0;
        }).catch(() => false);
      }
      expect(finished, 'a cron tick finished').toBe(true);
    } finally {
      const stopped = await stopWorkers(workers);
      for (const r of stopped) expect(r.code, r.stderr).toBe(0);
    }
    await withStore(db, async (s) => {
      const ticks = await sql<{ slot: string; n: number }>`
        select date_trunc('minute', created_on)::text as slot, count(*)::int as n from ${sql.table(`${ENGINE_SCHEMA}.job`)}
        where name = ${QUEUES.tick} group by 1`.execute(s.db);
      expect(ticks.rows.length).toBeGreaterThanOrEqual(1);
      for (const t of ticks.rows) expect(t.n, `slot ${t.slot}`).toBe(1);
      const perTickApp = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.table(`${ENGINE_SCHEMA}.job`)} where name = ${QUEUES.app} group by data->>'tick', data->>'appId'`.execute(s.db);
      for (const r of perTickApp.rows) expect(r.n).toBe(1);
    });
    const perApp = await okRunsPerApp(db);
    for (const app of APPS) expect(perApp.get(app) ?? 0, app).toBeGreaterThanOrEqual(1);
    await expectNoOverlap(db);
  }, 180_000);

  it('two `callsync sync` processes at once never sync one app twice at once', async ({ sim, database: db, writeConfig }) => {
    const cfg = writeConfig({ detailFetch: 'always', concurrency: 2 });
    const [a, b] = await Promise.all([0, 1].map(() => runCli(['sync', '--config', cfg, '--no-progress'], env)));
    for (const r of [a!, b!]) expect([0, 4], r.stderr).toContain(r.code);
    await expectNoOverlap(db);
    const perApp = await okRunsPerApp(db);
    for (const app of APPS) expect(perApp.get(app) ?? 0, app).toBeGreaterThanOrEqual(1);
    // An app one process left alone was named, with the reason, and made its exit code 4.
    const skipped = `${a!.stdout}${b!.stdout}`.match(/skipped: another callsync process is syncing it now/g) ?? [];
    if (skipped.length) expect([a!.code, b!.code]).toContain(4);
    await checkTruth(sim, db, APPS);
  }, 120_000);
});

describe.runIf(postgres)('an app that fails within the night', () => {
  test.override({ dialect: 'postgres', simApps: [{ appId: 'steady', calls: 80 }, { appId: 'flaky', calls: 80, unavailableRequests: 2 }, { appId: 'broken', calls: 80, keyScope: 'readOnly' }], simFaults: {} });

  /**
   * Last month's billing export as the tick wrote it; on days 29–31, when no tick writes one
   * (exportDayOfMonth is at most 28), as `export billing` writes it from the same database: the
   * stale marking is the same code's, so these tests run every day of the month.
   */
  async function exportRows(dir: string, cfg: string): Promise<{ app_id: string; stale: string }[]> {
    const month = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
    const path = join(dir, `billing-${month}.csv`);
    if (today > 28) {
      mkdirSync(dir, { recursive: true });
      const out = await runCli(['export', 'billing', '--month', month, '--config', cfg, '--out', path], env);
      expect(out.code, out.stderr).toBe(0);
    }
    return parse(readFileSync(path, 'utf8'), { columns: true }) as { app_id: string; stale: string }[];
  }

  it('an app whose first two attempts fail succeeds on its third within the tick; the export marks nothing stale', async ({ sim, database: db, dir }) => {
    const exportDir = join(dir, 'exports');
    const cfg = join(dir, 'flaky.json');
    // maxAttempts 1: the client does not retry the 503 itself, so each job attempt meets one.
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['steady', 'flaky'], db, engineConfig(exportDir, { maxAttempts: 1 }))));
    const tick = await runCli(['schedule', '--config', cfg, '--run-now'], env);
    expect(tick.code, tick.stderr).toBe(0);
    expect(tick.stdout).toMatch(/flaky \(us\): ok \(attempt 3\)/);
    expect(tick.stdout).toMatch(/steady \(us\): ok \(attempt 1\)/);
    expect(tick.stderr).not.toMatch(/STALE/);
    expect((await exportRows(exportDir, cfg)).every((r) => r.stale === '0')).toBe(true);
    await withStore(db, async (s) => {
      const flaky = await s.db.selectFrom('sync_runs').select('status').where('app_id', '=', 'flaky').orderBy('id').execute();
      expect(flaky.map((r) => r.status)).toEqual(['failed', 'failed', 'ok']);
    });
    await checkTruth(sim, db, ['steady', 'flaky']);
    const status = await runCli(['status', '--config', cfg], env);
    expect(status.code, status.stdout).toBe(0);
  }, 120_000);

  it('an app that fails every attempt is failed in `status` and stale in the export', async ({ sim, database: db, dir }) => {
    const exportDir = join(dir, 'exports');
    const cfg = join(dir, 'broken.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['steady', 'broken'], db, engineConfig(exportDir, { maxAttempts: 1 }))));
    const tick = await runCli(['schedule', '--config', cfg, '--run-now'], env);
    expect(tick.code).toBe(1);
    expect(tick.stderr).toMatch(/broken \(us\): failed after 3 attempt\(s\)/);
    // The tick names the stale app when it writes the export (not on days 29–31: see exportRows).
    if (today <= 28) expect(tick.stderr).toMatch(/STALE \(rows marked stale=1\): broken \(us\)/);
    const rows = await exportRows(exportDir, cfg);
    // A stale app has its total row even without calls in the month: it cannot go missing silently.
    expect(rows.filter((r) => r.app_id === 'broken').length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.app_id === 'broken').every((r) => r.stale === '1')).toBe(true);
    expect(rows.filter((r) => r.app_id === 'steady').every((r) => r.stale === '0')).toBe(true);
    const status = await runCli(['status', '--config', cfg], env);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/broken \(us\).*failed after 3 attempts/);
    expect(status.stdout).toMatch(/steady \(us\).*done/);
  }, 120_000);
});
