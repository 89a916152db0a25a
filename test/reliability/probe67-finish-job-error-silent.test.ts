import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { describe, expect } from 'vitest';
import { systemClock, type Clock } from '../../src/config/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { runTickNow, startEngineWorker } from '../../src/schedule/engine-worker.js';
import { ENGINE_SCHEMA, QUEUES } from '../../src/schedule/job-engine.js';
import { openStore } from '../../src/store/connection.js';
import { sql } from 'kysely';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { testSettings } from '../helpers/harness.js';

/**
 * probe67 F4. The finish job is sent with retryLimit 100,000 so that "apps still running" (TickNotDone)
 * is polled; but every other error of the tick's end (the billing export's directory not writable
 * or full on the export day, the reconciliation's query failing) is retried the same way, every
 * finishPollSeconds, for days, and nothing says so: a long-running worker prints a tick only when
 * its finish job completes, the engine does not log a handler's error, and `schedule --run-now`
 * waits for the finish job to complete or fail, so it hangs. The month's billing export is never
 * written and nobody is told.
 */
const postgres = (await testDialects()).includes('postgres');

describe.runIf(postgres)("a tick whose end fails (probe67 F4)", () => {
  test.override({ dialect: 'postgres', simApps: [{ appId: 'a1', calls: 40 }], simFaults: {} });

  it('ends failed, loudly, instead of retrying the finish job for days', async ({ sim, database: db, dir }) => {
    // The export's folder cannot be made: its parent is a file.
    writeFileSync(join(dir, 'not-a-dir'), 'x');
    const settings = testSettings(sim, ['a1'], db, {
      schedule: { reconcile: false, exportDayOfMonth: 1, exportDir: join(dir, 'not-a-dir', 'exports'), timezone: 'UTC', workerConcurrency: 1, retryLimit: 0, retryDelaySeconds: 1, retryBackoff: false, jobExpirySeconds: 60, pollIntervalSeconds: 0.5, expiryCheckSeconds: 1 },
    });
    // The export day: the 1st of this month, noon UTC (the sync does not care).
    const d = new Date();
    const exportDay = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1, 12);
    const offset = Date.now() - exportDay;
    const clock: Clock = { ...systemClock, now: () => Date.now() - offset };
    const store = await openStore(db);
    const dispatcher = new Agent({ connections: 4 });
    const stop = new AbortController();
    const worker = await startEngineWorker({ db: store.db, dispatcher, clock, log: silentLogger }, settings, { auth: {}, signal: stop.signal, cron: false });
    try {
      const giveUp = AbortSignal.timeout(30_000);
      const outcome = await runTickNow(worker, settings, giveUp);
      // Today: runTickNow is still waiting when the 30 s run out (the finish job keeps retrying).
      expect(giveUp.aborted, 'the tick ended (ok or failed) within 30 s').toBe(false);
      expect(outcome?.exportPath, 'no export was written, so the tick cannot report one').toBeUndefined();
      // The tick says why it failed.
      expect(outcome?.followUpError).toMatch(/not-a-dir/);
      const finish = await sql<{ state: string; retry_count: number }>`select state::text as state, retry_count from ${sql.table(`${ENGINE_SCHEMA}.job`)} where name = ${QUEUES.finish}`.execute(store.db);
      expect(finish.rows.map((r) => r.state)).not.toContain('retry');
    } finally {
      stop.abort();
      await worker.stop();
      await dispatcher.close();
      await store.close();
    }
  }, 90_000);
});
