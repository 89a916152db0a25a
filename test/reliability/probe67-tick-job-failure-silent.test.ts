import { Agent } from 'undici';
import { describe, expect } from 'vitest';
import { systemClock } from '../../src/config/clock.js';
import type { Logger } from '../../src/log/logger.js';
import { startEngineWorker } from '../../src/schedule/engine-worker.js';
import { QUEUES } from '../../src/schedule/job-engine.js';
import { openStore } from '../../src/store/connection.js';
import { setTimeout as delay } from 'node:timers/promises';
import { runCli } from '../helpers/cli.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, testSettings } from '../helpers/harness.js';

/**
 * probe67 F5. A tick job whose handler fails (here: the database holds an unfinished `callsync copy`,
 * so prepareDatabase refuses; equally a migration that fails, or the database refusing a write) is
 * retried twice by the engine and then `failed`, and nothing is said: the cron workers log no line,
 * send no app job and no finish job, so the night is skipped; `status` still read the last night's
 * runs and jobs: healthy, exit 0 (now TICK FAILED, exit 1). (`schedule --run-now` alone says "the tick could not be queued or
 * finished (see the log)", and the log has nothing.)
 */
const postgres = (await testDialects()).includes('postgres');

function capturingLogger(lines: { level: string; obj: object; msg?: string }[]): Logger {
  const l: Logger = {
    info: (obj, msg) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void lines.push({ level: 'error', obj, msg }),
    debug: () => undefined,
    child: () => l,
  };
  return l;
}

describe.runIf(postgres)('a tick job that fails (probe67 F5)', () => {
  test.override({ dialect: 'postgres', simApps: [{ appId: 'a1', calls: 30 }], simFaults: {} });

  it('is logged as an error by the worker', async ({ sim, database: db, writeConfig, dir }) => {
    const schedule = { reconcile: false, exportDayOfMonth: 0, exportDir: dir, timezone: 'UTC', workerConcurrency: 1, retryLimit: 0, retryDelaySeconds: 1, retryBackoff: false, jobExpirySeconds: 60, pollIntervalSeconds: 0.5, expiryCheckSeconds: 1 };
    const cfg = writeConfig({ schedule });
    const first = await runCli(['sync', '--config', cfg, '--no-progress'], { [KEY_ENV]: TEST_KEY });
    expect(first.code, first.stderr).toBe(0);
    const settings = testSettings(sim, ['a1'], db, { schedule });
    const store = await openStore(db);
    // A copy into this database stopped half-way: every sync is refused until it is run again.
    await store.db.insertInto('callsync_settings').values({ key: 'copied_from:/tmp/old.db', value: JSON.stringify({ state: 'copying', history: null }) }).execute();
    const dispatcher = new Agent({ connections: 4 });
    const stop = new AbortController();
    const lines: { level: string; obj: object; msg?: string }[] = [];
    const worker = await startEngineWorker({ db: store.db, dispatcher, clock: systemClock, log: capturingLogger(lines) }, settings, { auth: {}, signal: stop.signal, cron: false });
    try {
      // What the cron sends at a slot; no retries so the test need not wait them out.
      const tick = await worker.boss.send(QUEUES.tick, { source: 'cron' }, { retryLimit: 0, expireInSeconds: 60 });
      let state = '';
      for (let i = 0; i < 100 && state !== 'failed'; i++) {
        await delay(200);
        state = (await worker.boss.getJobById(QUEUES.tick, tick!, { includeArchive: true }))?.state ?? '';
      }
      expect(state).toBe('failed');
      expect(lines.filter((l) => l.level === 'error').map((l) => `${l.msg} ${JSON.stringify(l.obj)}`).join('\n')).toMatch(/unfinished copy/);
      // And `status` (the healthcheck) says so: the apps' rows still read last night's runs.
      const st = await runCli(['status', '--config', cfg]);
      expect(st.code, st.stdout + st.stderr).toBe(1);
      expect(st.stdout).toMatch(/TICK FAILED: the schedule's last tick .* failed after 1 attempts: .*unfinished copy/);
      expect(st.stdout).toMatch(/UNHEALTHY/);
    } finally {
      stop.abort();
      await worker.stop();
      await dispatcher.close();
      await store.close();
    }
  }, 90_000);
});
