/**
 * One `callsync sync` as the CLI runs it (runSyncExclusive, a keep-alive Agent, a SQLite file), in a
 * process of its own so that /usr/bin/time measures its peak RSS alone. Unlike the CLI it may lift
 * the config's requestsPerMinute cap (100,000/min): against the local simulator the benchmark
 * measures the engine, not the pacing.
 *
 *   node --import tsx bench/sync-child.ts '<SyncChildArgs as JSON>'
 *
 * Prints one JSON line (SyncChildResult) on stdout.
 */
import { Agent } from 'undici';
import { resolveConfig, type Settings } from '../src/config/load.js';
import { silentLogger } from '../src/log/logger.js';
import { openSqliteStore } from '../src/store/connection.js';
import { systemClock } from '../src/config/clock.js';
import { runSyncExclusive } from '../src/sync/run-sync.js';

export interface SyncChildArgs {
  database: string;
  appId: string;
  region: 'us' | 'eu' | 'in';
  apiKey: string;
  callsBaseUrl: string;
  chatBaseUrl: string;
  detailFetch: 'auto' | 'always';
  pageSize: number;
  concurrency: number;
  /** Above the config's 100,000 cap only here (see the file comment). */
  requestsPerMinute: number;
  full?: boolean;
}

export interface SyncChildResult {
  ok: boolean;
  status: string;
  mode: string;
  error?: string;
  /** The sync's own duration (runSyncExclusive, from migration to the last write). */
  syncMs: number;
  /** CPU time (user + system, all threads) of the process during the sync. */
  syncCpuMs: number;
  /** Wall time inside write transactions (AppSyncResult.writeMs). */
  writeMs: number;
  callsSeen: number;
  callsWritten: number;
  callsFromList: number;
  detailFetches: number;
  pages: number;
  requests: number;
  requestsByKind: Record<string, number>;
  retries: number;
  rateLimited: number;
  maxRssBytes: number;
  /** process.memoryUsage() at the end of the sync (before closing), for diagnosis. */
  memoryAtEnd: NodeJS.MemoryUsage;
}

const KEY_ENV = 'CALLSYNC_BENCH_KEY';
const CONFIG_MAX_RPM = 100_000;

const args = JSON.parse(process.argv[2] ?? '{}') as SyncChildArgs;
const base = resolveConfig(
  {
    database: args.database,
    apps: [{
      appId: args.appId, region: args.region, apiKeyEnv: KEY_ENV, callsBaseUrl: args.callsBaseUrl, chatBaseUrl: args.chatBaseUrl,
      requestsPerMinute: Math.min(args.requestsPerMinute, CONFIG_MAX_RPM),
    }],
    detailFetch: args.detailFetch,
    pageSize: args.pageSize,
    concurrency: args.concurrency,
    logLevel: 'error',
  },
  { [KEY_ENV]: args.apiKey },
  'bench',
);
const settings: Settings = { ...base, apps: base.apps.map((a) => ({ ...a, requestsPerMinute: args.requestsPerMinute })) };

const store = openSqliteStore(settings.database);
// As src/cli/runtime.ts builds it.
const dispatcher = new Agent({ connections: settings.concurrency + 2, keepAliveTimeout: 10_000, headersTimeout: settings.requestTimeoutMs, bodyTimeout: settings.requestTimeoutMs });
let out: SyncChildResult;
try {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const outcome = await runSyncExclusive({ db: store.db, dispatcher, clock: systemClock, log: silentLogger }, settings, { full: args.full ?? false });
  const syncMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (outcome.skipped) throw new Error(outcome.reason);
  const r = outcome.summary.results[0]!;
  out = {
    ok: outcome.summary.ok, status: r.status, mode: r.mode, ...(r.error ? { error: r.error } : {}), syncMs, syncCpuMs: (cpu.user + cpu.system) / 1000, writeMs: r.writeMs,
    callsSeen: r.callsSeen, callsWritten: r.callsWritten, callsFromList: r.callsFromList, detailFetches: r.detailFetches, pages: r.pages,
    requests: r.requests, requestsByKind: r.requestsByKind, retries: r.retries, rateLimited: r.rateLimited,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    memoryAtEnd: process.memoryUsage(),
  };
} finally {
  await dispatcher.close();
  await store.close();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
