import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from 'undici';
import type { Settings } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/log/logger.js';
import { openSqliteStore } from '../../../src/store/connection.js';
import { systemClock } from '../../../src/config/clock.js';
import { runSync, type RunSummary } from '../../../src/sync/run-sync.js';

export interface SettledRun {
  summary: RunSummary;
  /** Requests the server received after runSync had returned (work the run left behind). */
  requestsAfterReturn: number;
}

/**
 * Like the harness's syncWith, but keeps the store and the connection pool open until the server
 * has seen no request for `quietMs` after runSync returned, and says how many arrived meanwhile.
 * A run must leave nothing behind; closing the store under work it left would turn that work
 * into unhandled rejections and hide what the test is about.
 */
export async function syncAndSettle(settings: Settings, serverRequests: () => number, quietMs = 300): Promise<SettledRun> {
  const store = openSqliteStore(settings.database);
  const dispatcher = new Agent({ connections: settings.concurrency + 2, keepAliveTimeout: 5_000 });
  try {
    const summary = await runSync({ db: store.db, dispatcher, clock: systemClock, log: silentLogger }, settings);
    const atReturn = serverRequests();
    let seen = atReturn;
    for (let waited = 0; waited < 10_000; waited += quietMs) {
      await delay(quietMs);
      const now = serverRequests();
      if (now === seen) break;
      seen = now;
    }
    return { summary, requestsAfterReturn: seen - atReturn };
  } finally {
    await dispatcher.close();
    await store.close();
  }
}
