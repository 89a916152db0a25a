import type { Agent } from 'undici';
import type { Env, Settings } from '../config/load.js';
import { createLogger, LogOutput, type LogFormat, type Logger } from '../log/logger.js';
import { openStore, type Store } from '../store/connection.js';
import { systemClock, type Clock } from '../config/clock.js';
import { loadHttpAgent } from '../source/http-agent.js';
import { openForReading } from './open-for-reading.js';

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

/** What a runtime is built from: a config read whole, and the environment it was resolved with. */
export interface RuntimeSettings {
  readonly settings: Settings;
  readonly env: Env;
}

/**
 * Builds the dependencies of one command from resolved settings; `close()` releases them all.
 * `readOnly` (sync --dry-run) opens the database as every reader does (open-for-reading.ts), with
 * a database not created yet read as empty and a schema behind refused: nothing is written.
 */
export async function openRuntime({ settings, env }: RuntimeSettings, opts: { quiet?: boolean; readOnly?: boolean } = {}): Promise<Runtime> {
  const target = { database: settings.database, databasePasswordEnv: settings.databasePasswordEnv, busyTimeoutMs: settings.busyTimeoutMs, env };
  const store = opts.readOnly
    ? await openForReading(target, { missing: 'empty', upgrade: false })
    : await openStore(settings.database, { busyTimeoutMs: settings.busyTimeoutMs, passwordEnv: settings.databasePasswordEnv, env });
  // Loaded here, not at the top: program.ts imports this module for setLogFormat, and the HTTP
  // client is a sizeable share of the startup of the commands that never make a request.
  const HttpAgent = await loadHttpAgent();
  const dispatcher: Agent = new HttpAgent({
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
