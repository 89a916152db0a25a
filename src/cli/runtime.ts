import { Agent } from 'undici';
import type { Settings } from '../config/load.js';
import { createLogger, type Logger } from '../log/logger.js';
import { openStore, type Store } from '../store/connection.js';
import { systemClock, type RuntimeClock } from '../sync/clock.js';

export interface Runtime {
  readonly store: Store;
  readonly dispatcher: Agent;
  readonly log: Logger;
  readonly clock: RuntimeClock;
  close(): Promise<void>;
}

/** Builds the dependencies of one command from resolved settings; `close()` releases them all. */
export async function openRuntime(settings: Settings, opts: { quiet?: boolean } = {}): Promise<Runtime> {
  const store = await openStore(settings.database, { busyTimeoutMs: settings.busyTimeoutMs, passwordEnv: settings.databasePasswordEnv });
  const dispatcher = new Agent({
    // One keep-alive pool per origin, sized for the detail fetches plus the listing.
    connections: settings.concurrency + 2,
    keepAliveTimeout: 10_000,
    headersTimeout: settings.requestTimeoutMs,
    bodyTimeout: settings.requestTimeoutMs,
  });
  const log = createLogger(opts.quiet ? 'error' : settings.logLevel);
  return {
    store,
    dispatcher,
    log,
    clock: systemClock,
    async close() {
      await Promise.allSettled([dispatcher.close(), store.close()]);
    },
  };
}
