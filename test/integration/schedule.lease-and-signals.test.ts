import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { openSqliteStore } from '../../src/store/connection.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { collect, runCli, spawnCli } from '../helpers/cli.js';
import { integrityProblems } from '../helpers/db-dump.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';
import { countIn, waitFor } from '../helpers/watch-sqlite.js';

describe('the sync lease, stale leases and SIGTERM', () => {
  let sim: Simulator;
  const tmp = tempDir();
  const env = { [KEY_ENV]: TEST_KEY };
  beforeAll(async () => {
    // Latency and always-fetch stretch a sync to a few seconds, long enough to meet it mid-run.
    sim = await startTestSim([{ calls: 1500 }], { latencyMs: 3 });
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });
  const config = (name: string, extra: Record<string, unknown> = {}): { cfg: string; db: string } => {
    const db = join(tmp.dir, `${name}.db`);
    const cfg = join(tmp.dir, `${name}.json`);
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db, { detailFetch: 'always', concurrency: 4, ...extra })));
    return { cfg, db };
  };

  it('two schedulers on one database: one runs, the other skips and says why', async () => {
    const { cfg, db } = config('two');
    const first = spawnCli(['schedule', '--config', cfg, '--run-now'], env);
    const firstDone = collect(first);
    await waitFor(() => countIn(db, 'select count(*) as n from leases') === 1, 'the first scheduler to take the lease');
    const second = await runCli(['schedule', '--config', cfg, '--run-now'], env);
    expect(second.code).toBe(4);
    expect(second.stderr).toContain(`callsync: skipped: another callsync is syncing this database: process ${first.pid} on ${hostname()}`);
    const a = await firstDone;
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/app1 \(us\): ok \[full\]/);
    expect(countIn(db, 'select count(*) as n from leases')).toBe(0); // released
    expect(countIn(db, "select count(*) as n from sync_runs where status = 'ok'")).toBe(1);
  });

  it('takes over a stale lease, and respects a live one', async () => {
    const { cfg, db } = config('stale', { detailFetch: 'auto' });
    const store = openSqliteStore(db);
    await migrateToLatest(store.db);
    const row = { name: 'sync', holder: 'crashed', pid: 999999, host: 'other-host', acquired_at: 1, renewed_at: 1, expires_at: Date.now() - 1000 };
    await store.db.insertInto('leases').values(row).execute();
    await store.close();
    const run = await runCli(['sync', '--config', cfg], env);
    expect(run.code).toBe(0);
    await withStore(db, (s) => s.db.insertInto('leases').values({ ...row, host: 'busy-host', expires_at: Date.now() + 600_000 }).execute());
    const blocked = await runCli(['sync', '--config', cfg], env);
    expect(blocked.code).toBe(4);
    expect(blocked.stderr).toMatch(/skipped: another callsync is syncing this database: process 999999 on busy-host holds it until/);
  });

  it('SIGTERM mid-sync writes no partial call, marks the run interrupted, and the next run completes', async () => {
    const { cfg, db } = config('sigterm');
    const child = spawnCli(['sync', '--config', cfg], env);
    const done = collect(child);
    await waitFor(() => countIn(db, 'select count(*) as n from calls') >= 200, '200 stored calls');
    child.kill('SIGTERM');
    const res = await done;
    expect(res.code).toBe(5);
    expect(res.stderr).toContain('interrupted by a signal');
    await withStore(db, async (s) => {
      expect(await integrityProblems(s.db)).toEqual([]);
      const run = await s.db.selectFrom('sync_runs').select(['status', 'ended_at']).orderBy('id', 'desc').executeTakeFirstOrThrow();
      expect(run.status).toBe('interrupted');
      expect(run.ended_at).not.toBeNull();
      // Every stored call has exactly the participant rows its aggregate says: none half-written.
      const partial = await sql<{ n: number }>`select count(*) as n from calls c
        where c.participant_rows <> (select count(*) from call_participants p where p.app_id = c.app_id and p.session_id = c.session_id)`.execute(s.db);
      expect(partial.rows[0]!.n).toBe(0);
      expect((await s.db.selectFrom('leases').selectAll().execute()).length).toBe(0);
    });
    const rerun = await runCli(['sync', '--config', cfg], env);
    expect(rerun.code).toBe(0);
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
  });
});
