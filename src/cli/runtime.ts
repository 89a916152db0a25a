import { readEnvironment } from '../config/environment.js';
import { Agent } from 'undici';
import type { Settings } from '../config/load.js';
import { createLogger, LogOutput, type LogFormat, type Logger } from '../log/logger.js';
import { openScratchStore, openStore, type Store } from '../store/connection.js';
import { resolveDestination } from '../store/destinations/index.js';
import { migrateToLatest } from '../store/migrate.js';
import { systemClock, type Clock } from '../clock/clock.js';

export interface Runtime {
  readonly store: Store;
  readonly dispatcher: Agent;
  readonly log: Logger;
  /** Where log lines are written: a live display redirects it while it is on screen. */
  readonly logOutput: LogOutput;
  readonly clock: Clock;
  close(): Promise<void>;
}

let chosenFormat: LogFormat | undefined;

/** The global `--log-format` (undefined: pretty on a terminal, JSON otherwise). */
export function setLogFormat(format: LogFormat | undefined): void {
  chosenFormat = format;
}

/** Builds the dependencies of one command from resolved settings; `close()` releases them all. */
export async function openRuntime(settings: Settings, opts: { quiet?: boolean; readOnly?: boolean } = {}): Promise<Runtime> {
  const store = opts.readOnly ? await openReadOnly(settings) : await openStore(settings.database, { busyTimeoutMs: settings.busyTimeoutMs, passwordEnv: settings.databasePasswordEnv, env: readEnvironment() });
  const dispatcher = new Agent({
    // One keep-alive pool per origin, sized for the detail fetches plus the listing.
    connections: settings.concurrency + 2,
    keepAliveTimeout: 10_000,
    headersTimeout: settings.requestTimeoutMs,
    bodyTimeout: settings.requestTimeoutMs,
  });
  const logOutput = new LogOutput();
  const log = createLogger(opts.quiet ? 'error' : settings.logLevel, { output: logOutput, ...(chosenFormat ? { format: chosenFormat } : {}) });
  return {
    store,
    dispatcher,
    log,
    logOutput,
    clock: systemClock,
    async close() {
      await Promise.allSettled([dispatcher.close(), store.close()]);
    },
  };
}

/**
 * The database for a command that only reads it (`sync --dry-run`): a SQLite file opened read-only,
 * or, when there is none yet, an empty in-memory one (the file is not created). PostgreSQL is
 * opened as usual (the command only reads), or read as empty when no sync has created its tables.
 */
async function openReadOnly(settings: Settings): Promise<Store> {
  const destination = resolveDestination(settings.database);
  if (!destination.capabilities.localFile) {
    const server = await destination.open(settings.database, { passwordEnv: settings.databasePasswordEnv, env: readEnvironment() });
    // A database no sync has migrated yet holds nothing: read it as empty instead of creating tables.
    if ((await server.db.introspection.getTables()).some((t) => t.name === 'sync_state')) return server;
    await server.close();
  } else if (destination.exists(settings.database)) {
    return destination.open(settings.database, { readonly: true, busyTimeoutMs: settings.busyTimeoutMs });
  }
  const empty = openScratchStore();
  await migrateToLatest(empty.db);
  return empty;
}
