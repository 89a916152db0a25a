import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { collect, runCli, spawnCli } from '../helpers/cli.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, withStore } from '../helpers/harness.js';

/**
 * probe67 F3. syncAppLocked holds the lock of one app AND region, then marks every 'running' run of
 * the appId abandoned (abandonStaleRuns filters on app_id only). One appId in two regions (a
 * supported set-up: one-app-two-regions.test.ts), synced at once by two workers or two `sync`
 * processes: the second region's start marks the first region's live run `abandoned`, "the process
 * running it stopped without finishing (killed or crashed)"; `status` says ABANDONED / UNHEALTHY
 * (exit 1) and `runs` shows it ended, while it is syncing. Its end writes over it, so only the view
 * in between lies, but a healthcheck polled then fails, and an operator told "killed or crashed"
 * may restart a worker that is fine.
 */
const postgres = (await testDialects()).includes('postgres');
const env = { [KEY_ENV]: TEST_KEY };

describe.runIf(postgres)('one appId in two regions synced at once (probe67 F3)', () => {
  test.override({ dialect: 'postgres' });

  it("one region's start does not mark the other region's live run abandoned", async ({ startSim, database: db, dir }) => {
    const us = await startSim([{ appId: 'app1', calls: 1500 }], { latencyMs: 10 });
    const eu = await startSim([{ appId: 'app1', region: 'eu', calls: 40 }], {});
    const app = (region: string, sim: typeof us) => ({ appId: 'app1', region, apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...sim.baseUrls('app1') });
    const base = { database: db, requestTimeoutMs: 2_000, liveMaxDays: 3650, detailFetch: 'always', concurrency: 2 };
    const both = join(dir, 'both.json');
    const onlyEu = join(dir, 'eu.json');
    writeFileSync(both, JSON.stringify({ ...base, apps: [app('us', us), app('eu', eu)] }));
    writeFileSync(onlyEu, JSON.stringify({ ...base, apps: [app('eu', eu)] }));
    // A worker (here a `sync` of the us region alone) is syncing app1/us...
    const onlyUs = join(dir, 'us.json');
    writeFileSync(onlyUs, JSON.stringify({ ...base, apps: [app('us', us)] }));
    const a = spawnCli(['sync', '--config', onlyUs, '--no-progress'], env);
    const aDone = collect(a);
    let running = false;
    for (let i = 0; i < 300 && !running; i++) {
      await delay(50);
      running = await withStore(db, async (s) => (await s.db.selectFrom('sync_runs').select('id').where('status', '=', 'running').execute()).length > 0).catch(() => false);
    }
    expect(running).toBe(true);
    // ...when another process syncs app1/eu.
    const b = await runCli(['sync', '--config', onlyEu, '--no-progress'], env);
    expect(b.code, b.stderr).toBe(0);
    expect(a.exitCode, 'the us sync is still running').toBeNull();
    const runs = await withStore(db, (s) => s.db.selectFrom('sync_runs').select(['region', 'status', 'error']).orderBy('id').execute());
    expect(runs.find((r) => r.region === 'us')?.status).toBe('running');
    const status = await runCli(['status', '--config', both], env);
    expect(status.stdout).not.toMatch(/ABANDONED/);
    expect(status.code, status.stdout).toBe(0);
    const aResult = await aDone;
    expect(aResult.code, aResult.stderr).toBe(0);
  }, 120_000);
});
