import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { Agent } from 'undici';
import { describe, expect } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { startEngineWorker, type EngineWorker } from '../../src/schedule/engine-worker.js';
import { ENGINE_SCHEMA, QUEUES } from '../../src/schedule/job-engine.js';
import { openStore } from '../../src/store/connection.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { testSettings } from '../helpers/harness.js';
import { TestClock } from '../helpers/test-clock.js';

/**
 * probe78 F2 on PostgreSQL: the engine's cron (pg-boss 10) looks back from each check with
 * cron-parser's prev(), which finds no 02:30 on the spring-forward night in Europe/Berlin (the night
 * had no tick) and two in autumn (two ticks). The workers now send each slot themselves, read
 * forward (cron-timer.ts), one job per slot by its id however many workers send it.
 * Two workers share one database and a test clock.
 */
const postgres = (await testDialects()).includes('postgres');

describe.runIf(postgres)('two workers on the nights Europe/Berlin changes its clocks', () => {
  test.override({ dialect: 'postgres', simApps: [{ appId: 'a1', calls: 5 }], simFaults: {} });

  /** The tick jobs the cron sent while `clock` moved from `fromIso` over `minutes`, one minute at a time. */
  async function cronTicks(sim: Parameters<typeof testSettings>[0], db: string, fromIso: string, minutes: number): Promise<string[]> {
    const settings = testSettings(sim, ['a1'], db, {
      schedule: { cron: '30 2 * * *', timezone: 'Europe/Berlin', reconcile: false, exportDayOfMonth: 0, workerConcurrency: 1, pollIntervalSeconds: 0.5, expiryCheckSeconds: 1 },
    });
    const clock = new TestClock(Date.parse(fromIso));
    const store = await openStore(db);
    const dispatcher = new Agent({ connections: 4 });
    const stop = new AbortController();
    const workers: EngineWorker[] = [];
    try {
      for (let i = 0; i < 2; i++) workers.push(await startEngineWorker({ db: store.db, dispatcher, clock, log: silentLogger }, settings, { auth: {}, signal: stop.signal, cron: true }));
      for (let m = 0; m < minutes; m++) {
        await clock.advance(60_000);
        // The sends are real I/O: let them land before the clock moves on.
        await sleep(20);
      }
      await sleep(500);
      const rows = await sql<{ slot: string | null }>`
        select data->>'slot' as slot from ${sql.table(`${ENGINE_SCHEMA}.job`)} where name = ${QUEUES.tick}
        union all select data->>'slot' from ${sql.table(`${ENGINE_SCHEMA}.archive`)} where name = ${QUEUES.tick}`.execute(store.db);
      return rows.rows.map((r) => r.slot ?? '(no slot)').sort();
    } finally {
      stop.abort();
      for (const w of workers) await w.stop();
      await dispatcher.close();
      await store.close();
    }
  }

  it('spring forward: the night without 02:30 gets one tick, at 03:30 CEST', async ({ sim, newDatabase }) => {
    // 2027-03-28 in Berlin: 02:00 CET becomes 03:00 CEST; 03:30 CEST is 01:30 UTC.
    expect(await cronTicks(sim, await newDatabase('spring'), '2027-03-28T00:50:00Z', 60)).toEqual(['2027-03-28T01:30:00.000Z']);
  }, 60_000);

  it('fall back: the night with two 02:30s gets one tick', async ({ sim, newDatabase }) => {
    // 2027-10-31 in Berlin: 02:30 CEST is 00:30 UTC, 02:30 CET is 01:30 UTC.
    expect(await cronTicks(sim, await newDatabase('autumn'), '2027-10-31T00:20:00Z', 80)).toEqual(['2027-10-31T00:30:00.000Z']);
  }, 60_000);
});
