import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect } from 'vitest';
import { collect, runCli, spawnCli } from '../helpers/cli.js';
import { pgExec, testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

/**
 * probe67 F1. On PostgreSQL an app's advisory lock lives on a pooled connection set aside for the
 * whole sync (store/app-lock.ts), idle while the sync writes through the rest of the pool. When the
 * server ends that session (pg_terminate_backend, a failover, a proxy or firewall dropping an idle
 * connection, or idle_session_timeout, which a DBA sets for exactly such idle sessions), pg emits
 * 'error' on a checked-out client nobody listens on: the process dies with "Unhandled 'error' event"
 * and a raw stack (exit 1, not the one-line error of the exit-code table), taking down every other
 * app a schedule worker was syncing, and leaving its runs 'running'. With idle_session_timeout
 * shorter than a sync, every sync dies the same way: the schedule never completes a night.
 */
const postgres = (await testDialects()).includes('postgres');
const env = { [KEY_ENV]: TEST_KEY };
const NAMESPACE = 0x63616c6c;

async function lockBackends(url: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(
      `select pid from pg_locks where locktype = 'advisory' and granted and classid = $1::oid
       and database = (select oid from pg_database where datname = current_database())`,
      [NAMESPACE],
    );
    return r.rows.map((x: { pid: number }) => x.pid);
  } finally {
    await c.end();
  }
}

describe.runIf(postgres)('the connection holding an app lock drops mid-sync (probe67 F1)', () => {
  test.override({ dialect: 'postgres', simApps: [{ appId: 'big', calls: 1500 }], simFaults: { latencyMs: 10 } });

  it('pg_terminate_backend on the lock session: the run ends failed or interrupted with a reason, no crash; the next sync is exact', async ({ sim, database: db, writeConfig }) => {
    const cfg = writeConfig({ detailFetch: 'always', concurrency: 2 });
    const child = spawnCli(['sync', '--config', cfg, '--no-progress'], env);
    const done = collect(child);
    let pids: number[] = [];
    for (let i = 0; i < 400 && pids.length === 0; i++) {
      await delay(50);
      pids = await lockBackends(db).catch(() => []);
    }
    expect(pids.length, 'the sync took its app lock').toBe(1);
    await delay(1000);
    await pgExec(db, `select pg_terminate_backend(${pids[0]})`);
    const first = await done;
    expect(first.stderr).not.toMatch(/Unhandled 'error' event/);
    expect(first.code).not.toBe(0);
    await withStore(db, async (s) => {
      const runs = await s.db.selectFrom('sync_runs').select(['status', 'error']).execute();
      expect(runs.map((r) => r.status)).toEqual([expect.stringMatching(/^(failed|interrupted)$/)]);
      expect(runs[0]!.error ?? '').toMatch(/lock/);
    });
    const again = await runCli(['sync', '--config', cfg, '--no-progress'], env);
    expect(again.code, again.stderr).toBe(0);
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('big'))).toEqual([]));
  }, 120_000);

  it('idle_session_timeout shorter than a sync: the sync still ends ok and exact', async ({ sim, database: db, writeConfig }) => {
    const cfg = writeConfig({ detailFetch: 'always', concurrency: 2 });
    await pgExec(db, `alter database "${new URL(db).pathname.slice(1)}" set idle_session_timeout = '2s'`);
    const r = await runCli(['sync', '--config', cfg, '--no-progress'], env);
    expect(r.stderr).not.toMatch(/Unhandled 'error' event/);
    expect(r.code, r.stderr.slice(0, 500)).toBe(0);
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('big'))).toEqual([]));
  }, 120_000);
});
