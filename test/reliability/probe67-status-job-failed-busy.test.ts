import { join } from 'node:path';
import pg from 'pg';
import { describe, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY } from '../helpers/harness.js';

/**
 * probe67 F2. A session holding an app's advisory lock (a hung `callsync sync`, a paused worker VM,
 * a worker whose host vanished while the server keeps its TCP session for the ~2 h of keepalive)
 * makes each night's job of that app fail every attempt with "another callsync process is syncing
 * it now". No sync run is written for those attempts, so `status` still judges the app by its last
 * run (yesterday's ok, or the hung one's 'running', which counts as healthy): exit 0, "healthy",
 * while the tick says the app failed and its rows are stale. The container healthcheck uses status.
 */
const postgres = (await testDialects()).includes('postgres');
const env = { [KEY_ENV]: TEST_KEY };
const NAMESPACE = 0x63616c6c;

describe.runIf(postgres)("status while an app's engine job failed every attempt (probe67 F2)", () => {
  test.override({ dialect: 'postgres', simApps: [{ appId: 'free', calls: 60 }, { appId: 'held', calls: 60 }], simFaults: {} });

  it('is unhealthy (exit 1) and names the app', async ({ database: db, writeConfig, dir }) => {
    const cfg = writeConfig({
      detailFetch: 'always',
      schedule: { reconcile: false, exportDayOfMonth: 0, exportDir: join(dir, 'exports'), timezone: 'UTC', workerConcurrency: 2, retryLimit: 1, retryDelaySeconds: 1, retryBackoff: false, jobExpirySeconds: 60, pollIntervalSeconds: 0.5, expiryCheckSeconds: 1 },
    });
    // Last night: both apps synced ok.
    const first = await runCli(['sync', '--config', cfg, '--no-progress'], env);
    expect(first.code, first.stderr).toBe(0);
    const holder = new pg.Client({ connectionString: db });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1::int4, hashtext($2))', [NAMESPACE, 'app:held/us']);
      const tick = await runCli(['schedule', '--config', cfg, '--run-now'], env);
      expect(tick.code).toBe(1);
      expect(tick.stderr).toMatch(/held \(us\): failed after 2 attempt\(s\): another callsync process is syncing it now/);
      const status = await runCli(['status', '--config', cfg], env);
      expect(status.stdout).toMatch(/held \(us\).*failed after 2 attempts/);
      // Tonight's sync of `held` never ran: status must not say healthy.
      expect(status.stdout).not.toMatch(/^healthy$/m);
      expect(status.code, status.stdout).toBe(1);
      const json = JSON.parse((await runCli(['status', '--config', cfg, '--format', 'json'], env)).stdout) as { healthy: boolean };
      expect(json.healthy).toBe(false);
    } finally {
      await holder.end();
    }
  }, 120_000);
});
