/**
 * `npm run bench [-- --runs N] [--large] [--calls N] [--db-calls N] [--skip phase,…]`: the performance
 * figures of issues 6 and 16, each with its target and as a ratio measured within the same run, in one
 * table; every figure also goes to bench/results/latest.json. Every sync is `callsync sync` itself,
 * the built CLI in a process of its own under /usr/bin/time (bench/cli-sync.ts), against the simulator
 * running in another (bench/sim-server.ts), with `requestsPerMinute: "unlimited"` where it is not
 * paced on purpose. Figures are medians of `--runs` runs (default 3).
 *
 * Phases, one after the other (each can be skipped): throughput (bare client, full sync with
 * detailFetch always for CPU per call, storing alone (bench/store-only.ts), quiet and 1 % re-runs,
 * naive loop), memory (100k; 1M with --large), paced (3,000/min enforced; a first 20,000-call
 * sync at 500/min: requests per call),
 * reports (reconcile and billing export over the synced memory database), storage (bench/storage.ts:
 * bytes per call at --db-calls, default 200,000) and queries (bench/queries.ts: the five finance
 * questions against a lean layout, reconcile + billing export; at --db-calls, and 1,000,000 with --large).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { RequestsPerMinute } from '../src/config/schema.js';
import type { BoundArgs, BoundResult } from './bound-client.js';
import type { StoreOnlyArgs, StoreOnlyResult } from './store-only.js';
import { BENCH_KEY as KEY, syncCli, type SyncRun } from './cli-sync.js';
import { figuresTable } from './figures-table.js';
import { BIN_PATH, CALLSYNC_BIN, MB, REPO, runScript, runTimed, SimProcess } from './lib.js';
import type { NaiveArgs, NaiveResult } from './naive-sync.js';
import { checkPhaseSources, queriesPhase, storagePhase, type QueryFigures, type StorageFigures } from './optional-phases.js';

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    large: { type: 'boolean', default: false },
    calls: { type: 'string', default: '50000' },
    'db-calls': { type: 'string', default: '200000' },
    skip: { type: 'string', default: '' },
  },
});
const RUNS = Math.max(1, Number(flags.runs) || 3);
const FULL_CALLS = Math.max(1000, Number(flags.calls) || 50_000);
const DB_CALLS = Math.max(1000, Number(flags['db-calls']) || 200_000);
const SKIP = new Set(flags.skip.split(',').filter(Boolean));
const LARGE = flags.large;
const PHASES = ['throughput', 'memory', 'paced', 'reports', 'storage', 'queries'];
const unknownPhases = [...SKIP].filter((p) => !PHASES.includes(p));
if (unknownPhases.length) throw new Error(`--skip ${unknownPhases.join(',')}: the phases are ${PHASES.join(', ')}`);
checkPhaseSources(SKIP);

/** The sync's settings in the throughput phase; the bound uses the same page size and concurrency. */
const CONCURRENCY = 8;
const PAGE_SIZE = 100;
/** The naive loop is slow: a smaller size, compared per call. */
const NAIVE_CALLS = 2_000;
/** With SQLite's defaults every insert waits for an fsync: fewer calls still. */
const NAIVE_DEFAULTS_CALLS = 100;
const NEW_SHARE = 0.01;
/**
 * A smaller sync and bare client beside each full one: the difference of the two sizes is the CPU
 * of one more call, with what a process pays once (Node's start, modules, a new database's
 * migrations, most of the optimising compiler's work) cancelled out.
 */
const SMALL_CALLS = Math.max(1000, Math.round(FULL_CALLS / 5));
const MEMORY_SMALL = 100_000;
const MEMORY_LARGE = 1_000_000;
/** The memory syncs use the config's defaults (pageSize 100, concurrency 8, detailFetch auto). */
const MEMORY_PAGE_SIZE = 100;
/** The first sync under the free plan: the largest page List Calls serves (fewest requests). */
const FREE_PLAN_PAGE_SIZE = 1000;
const RATE_LIMIT = 3000;
/** About a minute of requests at RATE_LIMIT: 30 list pages, 3,000 Gets, the group members. */
const RATE_LIMITED_CALLS = 2_900;
const FREE_PLAN_LIMIT = 500;
const FREE_PLAN_CALLS = 20_000;
const UNPACED: RequestsPerMinute = 'unlimited';
const REPORT_FROM = '2025-06-01';
const REPORT_TO = '2025-12-01';

const work = join(tmpdir(), `callsync-bench-${process.pid}`);
mkdirSync(work, { recursive: true });
const resultsDir = join(REPO, 'bench', 'results');
mkdirSync(resultsDir, { recursive: true });

function log(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

function freshDb(name: string): string {
  const path = join(work, `${name}.db`);
  for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
  return path;
}

interface SyncOpts {
  detailFetch: 'auto' | 'always';
  pageSize?: number;
  requestsPerMinute?: RequestsPerMinute;
}

/** `callsync sync` of one simulator app (bench/cli-sync.ts), with the throughput phase's settings unless told. */
function sync(sim: SimProcess, appId: string, database: string, o: SyncOpts): Promise<SyncRun> {
  return syncCli(sim, appId, database, work, { detailFetch: o.detailFetch, pageSize: o.pageSize ?? PAGE_SIZE, concurrency: CONCURRENCY, requestsPerMinute: o.requestsPerMinute ?? UNPACED });
}

const callsPerSec = (calls: number, ms: number): number => (calls / ms) * 1000;
const round = (x: number, d = 0): number => Math.round(x * 10 ** d) / 10 ** d;

// ---------------------------------------------------------------------------------------------
export interface ThroughputRun {
  /** simCpuMs: CPU the simulator process used meanwhile. */
  bound: BoundResult & { callsPerSec: number; simCpuMs: number };
  full: SyncRun & { callsPerSec: number; simCpuMs: number };
  quiet: SyncRun;
  onePercent: SyncRun & { added: number };
  naive: NaiveResult & { callsPerSec: number };
  naiveDefaults: NaiveResult & { callsPerSec: number };
  /** CPU per call: the sync process (whole, /usr/bin/time) over the bound client's (in-process). */
  cpuRatio: number;
  /**
   * The bound again, spinning after each Get for the sync's extra CPU per call (so at about the
   * sync's pace), and the sync's CPU per call over that bound's own (its CPU less the spin).
   */
  boundAtPace: BoundResult & { callsPerSec: number };
  cpuRatioAtPace: number;
  /**
   * The real store alone (bench/store-only.ts: the same calls through upsertCalls in-process, no
   * HTTP), and the sync's CPU per call over the bare client's plus storing's: the floor no sync can
   * go below is 1 ×.
   */
  storeOnly: StoreOnlyResult;
  cpuRatioOverFloor: number;
  multipleOfNaive: number;
  multipleOfNaiveDefaults: number;
  /** The same pair at SMALL_CALLS, and what one more call costs each (µs) and the rest (ms). */
  small: { bound: BoundResult; full: SyncRun };
  marginal: { syncUs: number; boundUs: number; ratio: number; syncFixedMs: number; boundFixedMs: number };
  /** The sync's own durations (as the CLI reports them): quiet or 1 % re-run over the full sync. */
  quietFraction: number;
  onePercentFraction: number;
}

async function throughputPhase(): Promise<ThroughputRun[]> {
  const apps = Array.from({ length: RUNS }, (_, k) => ({ appId: `full${k + 1}`, region: 'us' as const, apiKey: KEY, calls: FULL_CALLS, seed: 7 }));
  const smallApps = apps.map((a, k) => ({ ...a, appId: `small${k + 1}`, calls: SMALL_CALLS }));
  const sim = await SimProcess.start({ apps: [...apps, ...smallApps, { appId: 'naive', region: 'us', apiKey: KEY, calls: NAIVE_CALLS * 2, seed: 7 }] });
  const out: ThroughputRun[] = [];
  try {
    for (let k = 0; k < RUNS; k++) {
      const appId = apps[k]!.appId;
      const urls = await sim.baseUrls(appId);
      const boundArgs: BoundArgs = { callsBaseUrl: urls.callsBaseUrl, apiKey: KEY, pageSize: PAGE_SIZE, concurrency: CONCURRENCY };
      const db = freshDb(`full-${k + 1}`);
      let bound: BoundResult | undefined;
      let full: SyncRun | undefined;
      let boundSimCpuMs = NaN;
      let fullSimCpuMs = NaN;
      // Alternate the order so that a drift in the machine's load favours neither side.
      for (const step of k % 2 === 0 ? ['bound', 'full'] : ['full', 'bound']) {
        const simCpu0 = await sim.cpuMs();
        if (step === 'bound') {
          log(`run ${k + 1}/${RUNS}: bound client, ${FULL_CALLS} calls`);
          bound = (await runScript<BoundResult>('bench/bound-client.ts', boundArgs)).result;
          boundSimCpuMs = (await sim.cpuMs()) - simCpu0;
        } else {
          log(`run ${k + 1}/${RUNS}: full sync (detailFetch always), ${FULL_CALLS} calls`);
          full = await sync(sim, appId, db, { detailFetch: 'always' });
          fullSimCpuMs = (await sim.cpuMs()) - simCpu0;
        }
      }
      log(`run ${k + 1}/${RUNS}: bound client and full sync, ${SMALL_CALLS} calls (for the CPU of one more call)`);
      const small = await smallPair(sim, smallApps[k]!.appId, k);
      const extraUs = Math.max(0, (full!.cpuMs * 1000) / full!.callsSeen - (bound!.cpuMs * 1000) / bound!.calls);
      log(`run ${k + 1}/${RUNS}: bound client at the sync's pace (${Math.round(extraUs)} µs spun after each Get)`);
      const atPace = (await runScript<BoundResult>('bench/bound-client.ts', { ...boundArgs, busyUsPerCall: extraUs } satisfies BoundArgs)).result;
      log(`run ${k + 1}/${RUNS}: storing alone, ${FULL_CALLS} calls (the real store in-process, no HTTP)`);
      const storeOnlyArgs: StoreOnlyArgs = { database: freshDb(`store-only-${k + 1}`), appId, calls: FULL_CALLS, seed: apps[k]!.seed };
      const storeOnly = (await runScript<StoreOnlyResult>('bench/store-only.ts', storeOnlyArgs)).result;
      rmSync(storeOnlyArgs.database, { force: true });
      log(`run ${k + 1}/${RUNS}: quiet re-run`);
      const quiet = await sync(sim, appId, db, { detailFetch: 'always' });
      const added = (await sim.advance(appId, { newCalls: Math.round(FULL_CALLS * NEW_SHARE) })).added;
      log(`run ${k + 1}/${RUNS}: re-run with ${added} new calls`);
      const onePercent = await sync(sim, appId, db, { detailFetch: 'always' });
      log(`run ${k + 1}/${RUNS}: naive loop, ${NAIVE_CALLS} calls (SQLite as the sync opens it, then SQLite defaults)`);
      const naiveArgs: NaiveArgs = { callsBaseUrl: (await sim.baseUrls('naive')).callsBaseUrl, apiKey: KEY, database: freshDb(`naive-${k + 1}`), pageSize: PAGE_SIZE, maxCalls: NAIVE_CALLS, sqlite: 'store' };
      const naive = (await runScript<NaiveResult>('bench/naive-sync.ts', naiveArgs)).result;
      const naiveDefaults = (await runScript<NaiveResult>('bench/naive-sync.ts', { ...naiveArgs, database: freshDb(`naive-defaults-${k + 1}`), maxCalls: NAIVE_DEFAULTS_CALLS, sqlite: 'defaults' } satisfies NaiveArgs)).result;
      const b = { ...bound!, callsPerSec: callsPerSec(bound!.calls, bound!.ms), simCpuMs: boundSimCpuMs };
      const f = { ...full!, callsPerSec: callsPerSec(full!.callsSeen, full!.syncMs), simCpuMs: fullSimCpuMs };
      const n = { ...naive, callsPerSec: callsPerSec(naive.calls, naive.ms) };
      const nd = { ...naiveDefaults, callsPerSec: callsPerSec(naiveDefaults.calls, naiveDefaults.ms) };
      out.push({
        bound: b, full: f, quiet, onePercent: { ...onePercent, added }, naive: n, naiveDefaults: nd,
        cpuRatio: (f.cpuMs / f.callsSeen) / (b.cpuMs / b.calls),
        boundAtPace: { ...atPace, callsPerSec: callsPerSec(atPace.calls, atPace.ms) },
        cpuRatioAtPace: (f.cpuMs / f.callsSeen) / ((atPace.cpuMs - atPace.busyMs) / atPace.calls),
        storeOnly,
        small,
        marginal: marginalCpu(small, { bound: b, full: f }),
        cpuRatioOverFloor: (f.cpuMs / f.callsSeen) / (b.cpuMs / b.calls + storeOnly.cpuMs / storeOnly.calls),
        multipleOfNaive: f.callsPerSec / n.callsPerSec,
        multipleOfNaiveDefaults: f.callsPerSec / nd.callsPerSec,
        quietFraction: quiet.syncMs / f.syncMs,
        onePercentFraction: onePercent.syncMs / f.syncMs,
      });
      log(`  CPU per call: sync ${round((f.cpuMs * 1000) / f.callsSeen)} µs, bound ${round((b.cpuMs * 1000) / b.calls)} µs; bound ${round(b.callsPerSec)} calls/s, sync ${round(f.callsPerSec)} calls/s, naive ${round(n.callsPerSec)} / ${round(nd.callsPerSec)} calls/s; quiet ${round(quiet.syncMs)} ms, 1 % ${round(onePercent.syncMs)} ms`);
      rmSync(db, { force: true });
    }
  } finally {
    await sim.close();
  }
  return out;
}

/** The bound and the sync of a SMALL_CALLS app, in the same alternating order as the full pair. */
async function smallPair(sim: SimProcess, appId: string, k: number): Promise<{ bound: BoundResult; full: SyncRun }> {
  const args: BoundArgs = { callsBaseUrl: (await sim.baseUrls(appId)).callsBaseUrl, apiKey: KEY, pageSize: PAGE_SIZE, concurrency: CONCURRENCY };
  const db = freshDb(`small-${k + 1}`);
  let bound: BoundResult | undefined;
  let full: SyncRun | undefined;
  for (const step of k % 2 === 0 ? ['bound', 'full'] : ['full', 'bound']) {
    if (step === 'bound') bound = (await runScript<BoundResult>('bench/bound-client.ts', args)).result;
    else full = await sync(sim, appId, db, { detailFetch: 'always' });
  }
  rmSync(db, { force: true });
  return { bound: bound!, full: full! };
}

/** CPU of one more call (the slope between the two sizes) and of everything else (the intercept). */
function marginalCpu(small: { bound: BoundResult; full: SyncRun }, big: { bound: BoundResult; full: SyncRun }): ThroughputRun['marginal'] {
  const syncUs = ((big.full.cpuMs - small.full.cpuMs) * 1000) / (big.full.callsSeen - small.full.callsSeen);
  const boundUs = ((big.bound.cpuMs - small.bound.cpuMs) * 1000) / (big.bound.calls - small.bound.calls);
  return {
    syncUs, boundUs, ratio: syncUs / boundUs,
    syncFixedMs: big.full.cpuMs - (syncUs * big.full.callsSeen) / 1000,
    boundFixedMs: big.bound.cpuMs - (boundUs * big.bound.calls) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------
export interface MemoryRun {
  calls: number;
  runs: SyncRun[];
  database: string;
}

async function memoryPhase(): Promise<MemoryRun[]> {
  const sizes = LARGE ? [MEMORY_SMALL, MEMORY_LARGE] : [MEMORY_SMALL];
  const sim = await SimProcess.start({ apps: sizes.map((calls) => ({ appId: `mem${calls}`, region: 'us' as const, apiKey: KEY, calls, seed: 11 })) });
  const out: MemoryRun[] = [];
  try {
    for (const calls of sizes) {
      // The large sync takes minutes: once. The small one as often as the other figures.
      const n = calls === MEMORY_LARGE ? 1 : RUNS;
      const runs: SyncRun[] = [];
      let database = '';
      for (let k = 0; k < n; k++) {
        database = freshDb(`mem-${calls}`);
        log(`memory: ${calls}-call sync (callsync sync through bin/callsync.js, detailFetch auto, pageSize ${MEMORY_PAGE_SIZE}) ${k + 1}/${n}`);
        runs.push(await sync(sim, `mem${calls}`, database, { detailFetch: 'auto', pageSize: MEMORY_PAGE_SIZE }));
        log(`  ${round(runs.at(-1)!.peakRssBytes / MB)} MB peak RSS, ${round(runs.at(-1)!.syncMs / 1000, 1)} s`);
      }
      out.push({ calls, runs, database });
    }
  } finally {
    await sim.close();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
export interface PacedResult {
  rateLimited: SyncRun & { usedFraction: number };
  freePlanAuto: SyncRun;
  freePlanAlways: SyncRun;
  /** auto, unpaced, on data where 5 % of list entries omit participants. */
  freePlanVaried: SyncRun;
}

async function pacedPhase(): Promise<PacedResult> {
  const limited = await SimProcess.start({ apps: [{ appId: 'limited', region: 'us', apiKey: KEY, calls: RATE_LIMITED_CALLS, seed: 13 }], faults: { rateLimitPerMinute: RATE_LIMIT } });
  // Complete list entries (every final call's entry whole): the case the requests-per-call target is about.
  const free = await SimProcess.start({ apps: [{ appId: 'free', region: 'us', apiKey: KEY, calls: FREE_PLAN_CALLS, seed: 17, listEntries: 'complete' }], faults: { rateLimitPerMinute: FREE_PLAN_LIMIT } });
  const counter = await SimProcess.start({
    apps: [
      { appId: 'free', region: 'us', apiKey: KEY, calls: FREE_PLAN_CALLS, seed: 17, listEntries: 'complete' },
      { appId: 'varied', region: 'us', apiKey: KEY, calls: FREE_PLAN_CALLS, seed: 17 },
    ],
  });
  try {
    // Both paced syncs together: each waits on its own pacer, and neither is CPU-bound.
    log(`paced: ${RATE_LIMITED_CALLS}-call sync (always) at ${RATE_LIMIT}/min enforced, and a first ${FREE_PLAN_CALLS}-call sync (auto, pageSize ${FREE_PLAN_PAGE_SIZE}) at ${FREE_PLAN_LIMIT}/min enforced`);
    const [rl, auto] = await Promise.all([
      sync(limited, 'limited', freshDb('limited'), { detailFetch: 'always', requestsPerMinute: RATE_LIMIT }),
      sync(free, 'free', freshDb('free-auto'), { detailFetch: 'auto', requestsPerMinute: FREE_PLAN_LIMIT, pageSize: FREE_PLAN_PAGE_SIZE }),
    ]);
    // The same first sync with detailFetch always would take ~40 min at 500/min: count its requests
    // unpaced, the time is that count at the limit. Likewise auto on the simulator's usual data,
    // where 5 % of list entries lack their participants.
    log(`paced: counting the requests of the ${FREE_PLAN_CALLS}-call sync with detailFetch always, and auto on varied entries (unpaced)`);
    const always = await sync(counter, 'free', freshDb('free-always'), { detailFetch: 'always', pageSize: FREE_PLAN_PAGE_SIZE });
    const varied = await sync(counter, 'varied', freshDb('free-varied'), { detailFetch: 'auto', pageSize: FREE_PLAN_PAGE_SIZE });
    const usedFraction = rl.sim.requests / ((rl.syncMs / 60_000) * RATE_LIMIT);
    return { rateLimited: { ...rl, usedFraction }, freePlanAuto: auto, freePlanAlways: always, freePlanVaried: varied };
  } finally {
    await Promise.all([limited.close(), free.close(), counter.close()]);
  }
}

// ---------------------------------------------------------------------------------------------
export interface ReportsResult {
  calls: number;
  reconcileMs: number[];
  exportMs: number[];
  totalMs: number[];
}

async function buildDist(): Promise<void> {
  log('npm run build (every sync and report runs the built CLI, through bin/callsync.js)');
  const build = await runTimed('npm', ['run', 'build'], { useTime: false });
  if (build.code !== 0) throw new Error(`npm run build failed: ${build.stdout.slice(-1000)}${build.stderr.slice(-1000)}`);
}

async function reportsPhase(database: string, calls: number): Promise<ReportsResult> {
  const out: ReportsResult = { calls, reconcileMs: [], exportMs: [], totalMs: [] };
  for (let k = 0; k < RUNS; k++) {
    log(`reports: reconcile and billing export over ${calls} calls ${k + 1}/${RUNS}`);
    const rec = await runTimed(CALLSYNC_BIN, ['reconcile', '--database', database, '--format', 'json'], { useTime: false, env: { ...process.env, PATH: BIN_PATH } });
    if (rec.code !== 0) throw new Error(`reconcile failed (${rec.code}): ${rec.stderr.slice(-1000)}`);
    const exp = await runTimed(CALLSYNC_BIN, ['export', 'billing', '--database', database, '--from', REPORT_FROM, '--to', REPORT_TO, '--out', join(work, 'billing.csv')], { useTime: false, env: { ...process.env, PATH: BIN_PATH } });
    if (exp.code !== 0) throw new Error(`export billing failed (${exp.code}): ${exp.stderr.slice(-1000)}`);
    out.reconcileMs.push(rec.wallMs);
    out.exportMs.push(exp.wallMs);
    out.totalMs.push(rec.wallMs + exp.wallMs);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
const t0 = Date.now();
const load0 = loadavg();
log(`${RUNS} run(s), full sync ${FULL_CALLS} calls, databases of ${DB_CALLS} calls${LARGE ? ', with the 1M-call rows' : ''}${SKIP.size ? `, skipping ${[...SKIP].join(', ')}` : ''}; work folder ${work}`);
await buildDist();
const throughput = SKIP.has('throughput') ? [] : await throughputPhase();
const memory = SKIP.has('memory') ? [] : await memoryPhase();
// Alone: a paced sync starved of CPU (beside the 1M-call sync, it was) sends late and uses less of its limit.
const paced = SKIP.has('paced') ? undefined : await pacedPhase();
const reportDb = memory.find((x) => x.calls === MEMORY_LARGE) ?? memory.find((x) => x.calls === MEMORY_SMALL);
const reports = SKIP.has('reports') || !reportDb ? undefined : await reportsPhase(reportDb.database, reportDb.calls);
let storage: StorageFigures | undefined;
if (!SKIP.has('storage')) {
  log(`storage: bytes per call at ${DB_CALLS} calls (bench/storage.ts)`);
  storage = await storagePhase(DB_CALLS, work, RUNS);
}
const queries: QueryFigures[] = [];
if (!SKIP.has('queries')) {
  for (const calls of LARGE ? [DB_CALLS, MEMORY_LARGE] : [DB_CALLS]) {
    log(`queries: the five finance questions, public schema and lean layout, and reconcile + billing export, at ${calls} calls (bench/queries.ts)`);
    queries.push(await queriesPhase(calls, work, RUNS));
  }
}

const { rows, text } = figuresTable({
  settings: { runs: RUNS, fullCalls: FULL_CALLS, smallCalls: SMALL_CALLS, dbCalls: DB_CALLS, large: LARGE, skip: SKIP, concurrency: CONCURRENCY, pageSize: PAGE_SIZE, naiveCalls: NAIVE_CALLS, naiveDefaultsCalls: NAIVE_DEFAULTS_CALLS, memoryPageSize: MEMORY_PAGE_SIZE, freePlanCalls: FREE_PLAN_CALLS, freePlanPageSize: FREE_PLAN_PAGE_SIZE, freePlanLimit: FREE_PLAN_LIMIT, rateLimit: RATE_LIMIT, memorySmall: MEMORY_SMALL, memoryLarge: MEMORY_LARGE },
  throughput, memory, paced, reports, storage, queries,
});
const load1 = loadavg();
const header = `callsync bench: ${RUNS} run(s), node ${process.version}, ${cpus().length} cores, ${round(totalmem() / 1024 ** 3)} GB; load average ${load0.map((x) => x.toFixed(2)).join(' ')} → ${load1.map((x) => x.toFixed(2)).join(' ')}; ${round((Date.now() - t0) / 1000)} s`;
process.stdout.write(`${header}\n${text}`);
const report = {
  startedAt: new Date(t0).toISOString(),
  durationS: round((Date.now() - t0) / 1000),
  machine: { node: process.version, cores: cpus().length, memGb: round(totalmem() / 1024 ** 3), loadavgStart: load0, loadavgEnd: load1 },
  settings: { runs: RUNS, fullCalls: FULL_CALLS, smallCalls: SMALL_CALLS, dbCalls: DB_CALLS, skipped: [...SKIP], concurrency: CONCURRENCY, pageSize: PAGE_SIZE, naiveCalls: NAIVE_CALLS, large: LARGE, memoryPageSize: MEMORY_PAGE_SIZE, freePlanPageSize: FREE_PLAN_PAGE_SIZE, rateLimit: RATE_LIMIT, freePlanLimit: FREE_PLAN_LIMIT },
  table: rows,
  throughput,
  memory: memory.map((x) => ({ calls: x.calls, runs: x.runs })),
  paced,
  reports,
  storage,
  queries,
};
writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
log(`wrote ${join('bench', 'results', 'latest.json')}`);
rmSync(work, { recursive: true, force: true });
process.exitCode = rows.some((r) => r.verdict === 'FAIL') ? 1 : 0;
