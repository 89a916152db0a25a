import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { collect, runCli, spawnCli } from '../helpers/cli.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

const APPS = Array.from({ length: 20 }, (_, i) => `w${String(i + 1).padStart(2, '0')}`);
const postgres = (await testDialects()).includes('postgres');

describe.runIf(postgres)('three workers and twenty apps on one PostgreSQL database', () => {
  test.override({ dialect: 'postgres', simApps: APPS.map((appId, i) => ({ appId, calls: 120, seed: 100 + i })), simFaults: { latencyMs: 2 } });
  const env = { [KEY_ENV]: TEST_KEY };
  const CONFIG = { detailFetch: 'always', concurrency: 2 };

  async function checkTruth(sim: Simulator, db: string): Promise<void> {
    await withStore(db, async (s) => {
      for (const app of APPS) expect(await diffAgainstTruth(s.db, sim.truth(app)), app).toEqual([]);
    });
  }

  it('syncs every app exactly once per tick, split across the workers, and reaches the truth', async ({ sim, database: db, writeConfig }) => {
    const cfg = writeConfig(CONFIG);
    const workers = await Promise.all([0, 1, 2].map(() => runCli(['sync', '--config', cfg, '--tick-key', 'tick-1', '--no-progress'], env)));
    for (const w of workers) expect(w.code, w.stderr).toBe(0);
    const synced = workers.map((w) => (w.stdout.match(/: ok \[full\]/g) ?? []).length);
    expect(synced.reduce((a, b) => a + b, 0)).toBe(APPS.length);
    expect(synced.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2); // the work was shared
    await withStore(db, async (s) => {
      const runs = await s.db.selectFrom('sync_runs').select(['app_id']).where('status', '=', 'ok').execute();
      expect(runs.map((r) => r.app_id).sort()).toEqual([...APPS]);
      const ticks = await s.db.selectFrom('app_ticks').select('app_id').where('tick_key', '=', 'tick-1').execute();
      expect(ticks).toHaveLength(APPS.length);
    });
    await checkTruth(sim, db);
    // A fourth worker on the same tick finds nothing left to do.
    const late = await runCli(['sync', '--config', cfg, '--tick-key', 'tick-1', '--no-progress'], env);
    expect(late.code).toBe(0);
    expect(late.stdout).not.toMatch(/: ok \[/);
    expect((late.stdout.match(/skipped: already synced for tick tick-1/g) ?? []).length).toBe(APPS.length);
  });

  it('killing one worker mid-run loses nothing: its apps are picked up, none twice', async ({ sim, database: db, writeConfig }) => {
    const cfg = writeConfig(CONFIG);
    const children = [0, 1, 2].map(() => spawnCli(['sync', '--config', cfg, '--tick-key', 'tick-k', '--no-progress'], env));
    const done = children.map((c) => collect(c));
    await delay(1_500);
    children[0]!.kill('SIGKILL');
    const results = await Promise.all(done);
    expect(results[0]!.signal).toBe('SIGKILL');
    for (const r of results.slice(1)) expect(r.code, r.stderr).toBe(0);
    // Whatever the killed worker held is free again (its process is gone): one more worker finishes the tick.
    const after = await runCli(['sync', '--config', cfg, '--tick-key', 'tick-k', '--no-progress'], env);
    expect(after.code, after.stderr).toBe(0);
    await withStore(db, async (s) => {
      const ticks = await s.db.selectFrom('app_ticks').select('app_id').where('tick_key', '=', 'tick-k').execute();
      expect(ticks.map((t) => t.app_id).sort()).toEqual([...APPS]);
      const ok = await s.db.selectFrom('sync_runs').select('app_id').where('status', '=', 'ok').execute();
      const perApp = new Map<string, number>();
      for (const r of ok) perApp.set(r.app_id, (perApp.get(r.app_id) ?? 0) + 1);
      for (const app of APPS) expect(perApp.get(app), app).toBe(1);
    });
    await checkTruth(sim, db);
  });
});
