import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { systemClock } from '../../src/config/clock.js';
import { acquireLease } from '../../src/sync/lease.js';
import { SYNC_LEASE } from '../../src/sync/run-sync.js';
import { runCli } from '../helpers/cli.js';
import { freshDatabase, testDialects } from '../helpers/databases.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig, withStore } from '../helpers/harness.js';

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/** The whole stored state that matters here: calls (with fingerprints), runs and sync state, as text. */
async function snapshot(db: string): Promise<string> {
  return withStore(db, async (s) =>
    JSON.stringify([
      await s.db.selectFrom('calls').selectAll().orderBy('session_id').execute(),
      await s.db.selectFrom('sync_runs').selectAll().orderBy('run_id').execute(),
      await s.db.selectFrom('sync_state').selectAll().execute(),
      await s.db.selectFrom('call_participants').select(({ fn }) => fn.countAll().as('n')).execute(),
    ]),
  );
}

describe('sync --dry-run: list requests only, nothing written', () => {
  let sim: Simulator;
  const tmp = tempDir();
  const db = join(tmp.dir, 'dry.db');
  const cfg = join(tmp.dir, 'dry.json');
  const env = { [KEY_ENV]: TEST_KEY };
  beforeAll(async () => {
    sim = await startTestSim([{ appId: 'app1', calls: 150 }]);
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('before any sync: every listed call is new, no Get Call is made and no database file is created', async () => {
    sim.resetStats();
    const res = await runCli(['sync', '--dry-run', '--config', cfg], env);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const listed = Number(/(\d+) calls listed/.exec(res.stdout)![1]);
    expect(listed).toBeGreaterThan(100);
    expect(res.stdout).toMatch(new RegExp(`^app1 \\(us\\): dry run \\[full\\]: ${listed} calls listed in \\d+ pages: ${listed} new, 0 changed, 0 unchanged.*a sync would make \\d+ Get Call requests.*listing proved complete$`, 'm'));
    expect(res.stdout).toContain(`database: ${db} (not created yet; nothing was written)`);
    expect(sim.stats('app1')).toMatchObject({ get: 0, members: 0 });
    expect(sim.stats('app1').list).toBeGreaterThan(0);
    expect(existsSync(db)).toBe(false);
  });

  it('after a sync: changed calls are found by the page planner, and the database (file and sync_runs) is unchanged', async () => {
    expect((await runCli(['sync', '--config', cfg], env)).code).toBe(0);
    // Three stored calls whose list entry no longer matches what was stored: a sync would rewrite them.
    await withStore(db, async (s) => {
      const ids = (await s.db.selectFrom('calls').select('session_id').where('is_final', '=', 1).orderBy('session_id').limit(3).execute()).map((r) => r.session_id);
      await s.db.updateTable('calls').set({ list_fingerprint: 'stale' }).where('session_id', 'in', ids).execute();
    });
    const hash = sha(db);
    const before = await snapshot(db);
    sim.resetStats();
    const res = await runCli(['sync', '--dry-run', '--full', '--json', '--config', cfg], env);
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const r = JSON.parse(lines[0]!) as Record<string, number | string | boolean>;
    expect(r).toMatchObject({ dryRun: true, appId: 'app1', region: 'us', mode: 'full', status: 'ok', changed: 3, new: 0, listingComplete: true, database: db });
    expect(r.unchanged).toBe((r.listed as number) - 3);
    expect(r.getCalls).toBeLessThanOrEqual(3);
    expect(sim.stats('app1')).toMatchObject({ get: 0, members: 0 });
    expect(sha(db)).toBe(hash);
    expect(await snapshot(db)).toBe(before);
  });

  it('does not wait for, nor take, the sync lease', async () => {
    await withStore(db, async (s) => {
      const got = await acquireLease(s.db, SYNC_LEASE, systemClock, 60_000);
      expect(got.acquired).toBe(true);
      const hash = sha(db);
      const res = await runCli(['sync', '--dry-run', '--config', cfg], env);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/dry run \[incremental\]/);
      expect(sha(db)).toBe(hash);
      const blocked = await runCli(['sync', '--config', cfg], env);
      expect(blocked.code).toBe(4);
      if (got.acquired) await got.lease.release();
    });
  });
});

const postgres = (await testDialects()).includes('postgres');

describe.runIf(postgres)('sync --dry-run on PostgreSQL', () => {
  let sim: Simulator;
  const tmp = tempDir();
  beforeAll(async () => {
    sim = await startTestSim([{ appId: 'app1', calls: 80 }]);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('creates no table in a database no sync has used, and leaves sync_runs alone after one', async () => {
    const pgdb = await freshDatabase('postgres', tmp.dir, 'dryrun');
    try {
      const cfg = join(tmp.dir, 'pg.json');
      writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], pgdb.url)));
      const env = { [KEY_ENV]: TEST_KEY };
      const first = await runCli(['sync', '--dry-run', '--json', '--config', cfg], env);
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({ mode: 'full', status: 'ok', new: 80, unchanged: 0 });
      const tables = await withStore(pgdb.url, (s) => s.db.introspection.getTables());
      expect(tables).toEqual([]);
      expect((await runCli(['sync', '--config', cfg], env)).code).toBe(0);
      const runs = async (): Promise<string> => withStore(pgdb.url, async (s) => JSON.stringify(await s.db.selectFrom('sync_runs').selectAll().orderBy('run_id').execute()));
      const before = await runs();
      sim.resetStats();
      const again = await runCli(['sync', '--dry-run', '--full', '--json', '--config', cfg], env);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ mode: 'full', status: 'ok', new: 0, changed: 0, unchanged: 80, getCalls: 0 });
      expect(sim.stats('app1')).toMatchObject({ get: 0, members: 0 });
      expect(await runs()).toBe(before);
    } finally {
      await pgdb.drop();
    }
  });
});
