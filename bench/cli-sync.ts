/**
 * One `callsync sync` exactly as a user runs it: the bin (`bin/callsync.js sync --config … --json`,
 * executed itself, after `npm run build`), a config file, the key in the environment, under
 * /usr/bin/time -v for its CPU (user + sys) and peak RSS. Against the local simulator the config says
 * `requestsPerMinute: "unlimited"`, so the benchmark measures the CLI's own work, not its pacing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestsPerMinute } from '../src/config/schema.js';
import type { SimStats } from '../src/simulator/index.js';
import { BIN_PATH, CALLSYNC_BIN, runTimed, type SimProcess } from './lib.js';

export const BENCH_KEY = 'bench-key-not-secret';
const KEY_ENV = 'CALLSYNC_BENCH_KEY';

export interface CliSyncOptions {
  detailFetch: 'auto' | 'always';
  pageSize: number;
  concurrency: number;
  requestsPerMinute: RequestsPerMinute;
}

export interface SyncRun {
  status: string;
  mode: string;
  /** The sync's own duration as the CLI reports it (durationMs of `sync --json`). */
  syncMs: number;
  /** The whole process, from exec to exit (Node's start, migrations and closing included). */
  wallMs: number;
  /** User + system CPU of the whole process (/usr/bin/time), in ms: what a user pays for. */
  cpuMs: number;
  /** /usr/bin/time's peak RSS of the process. */
  peakRssBytes: number;
  callsSeen: number;
  callsWritten: number;
  callsFromList: number;
  detailFetches: number;
  pages: number;
  requests: number;
  requestsByKind: Record<string, number>;
  retries: number;
  rateLimited: number;
  /** What the simulator counted for the app during this sync. */
  sim: SimStats;
}

/** The fields of one `callsync sync --json` line this file reads (src/cli/app-summary.ts). */
interface SyncJson {
  status: string;
  mode: string;
  durationMs: number;
  callsListed: number;
  callsWritten: number;
  callsFromList: number;
  detailFetches: number;
  pages: number;
  requests: number;
  requestsByKind: Record<string, number>;
  retries: number;
  rateLimited: number;
  error: string | null;
}

/** User + system CPU of a process run under /usr/bin/time -v, in ms. */
export function timeCpuMs(stderr: string): number {
  const user = Number(/User time \(seconds\): ([\d.]+)/.exec(stderr)?.[1] ?? NaN);
  const system = Number(/System time \(seconds\): ([\d.]+)/.exec(stderr)?.[1] ?? NaN);
  return (user + system) * 1000;
}

/** Runs `callsync sync` for one simulator app into `database`; throws unless the app ends ok. */
export async function syncCli(sim: SimProcess, appId: string, database: string, workDir: string, o: CliSyncOptions): Promise<SyncRun> {
  await sim.resetStats();
  const config = join(workDir, `${appId}.config.json`);
  writeFileSync(config, JSON.stringify({
    database, detailFetch: o.detailFetch, pageSize: o.pageSize, concurrency: o.concurrency,
    apps: [{ appId, region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: o.requestsPerMinute, ...(await sim.baseUrls(appId)) }],
  }));
  const run = await runTimed(CALLSYNC_BIN, ['sync', '--config', config, '--json'], { env: { PATH: BIN_PATH, [KEY_ENV]: BENCH_KEY } });
  const line = run.stdout.trim().split('\n').find((l) => l.startsWith('{'));
  const r = line ? (JSON.parse(line) as SyncJson) : undefined;
  if (run.code !== 0 || !r || r.status !== 'ok') throw new Error(`callsync sync of ${appId} failed (exit ${run.code}): ${run.stdout.slice(-1000)} ${run.stderr.slice(-1500)}`);
  if (run.maxRssBytes === undefined) throw new Error('/usr/bin/time is needed for the CPU and peak RSS figures (apt-get install time)');
  return {
    status: r.status, mode: r.mode, syncMs: r.durationMs, wallMs: run.wallMs, cpuMs: timeCpuMs(run.stderr), peakRssBytes: run.maxRssBytes,
    callsSeen: r.callsListed, callsWritten: r.callsWritten, callsFromList: r.callsFromList, detailFetches: r.detailFetches, pages: r.pages,
    requests: r.requests, requestsByKind: r.requestsByKind, retries: r.retries, rateLimited: r.rateLimited,
    sim: await sim.stats(appId),
  };
}
