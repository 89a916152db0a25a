/**
 * `npm run bench [-- --runs N] [--large] [--calls N] [--skip phase,…]`: the performance targets of
 * issue 6, measured against the simulator running in its own process (bench/sim-server.ts), with
 * every sync and client in a fresh child process (peak RSS from /usr/bin/time -v). Prints one table
 * and writes bench/results/latest.json. Figures are medians of `--runs` runs (default 3); each
 * comparison (sync vs bound, sync vs naive, re-run vs full sync) is taken within one run.
 *
 * Phases, one after the other: throughput (bound, full sync, quiet and 1 % re-runs, naive), memory
 * (100k; 1M with --large), paced (3,000/min enforced; a first 20,000-call sync at 500/min), reports
 * (reconcile and billing export; over 1M calls with --large, else over the 100k database).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import type { SimStats } from '../src/simulator/index.js';
import type { BoundArgs, BoundResult } from './bound-client.js';
import { MB, median, REPO, runScript, runTimed, SimProcess } from './lib.js';
import type { NaiveArgs, NaiveResult } from './naive-sync.js';
import type { SyncChildArgs, SyncChildResult } from './sync-child.js';

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    large: { type: 'boolean', default: false },
    calls: { type: 'string', default: '50000' },
    skip: { type: 'string', default: '' },
  },
});
const RUNS = Math.max(1, Number(flags.runs) || 3);
const FULL_CALLS = Math.max(1000, Number(flags.calls) || 50_000);
const SKIP = new Set(flags.skip.split(',').filter(Boolean));
const LARGE = flags.large;

/** The sync's settings in the throughput phase; the bound uses the same page size and concurrency. */
const CONCURRENCY = 8;
const PAGE_SIZE = 100;
/** The naive loop is slow: a smaller size, compared per call. */
const NAIVE_CALLS = 2_000;
/** With SQLite's defaults every insert waits for an fsync: fewer calls still. */
const NAIVE_DEFAULTS_CALLS = 100;
const NEW_SHARE = 0.01;
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
const UNPACED = 1e9;
const KEY = 'bench-key-not-secret';
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

interface SyncRun extends SyncChildResult {
  /** Process wall time, including Node's start (≈0.5 s with tsx). */
  wallMs: number;
  /** /usr/bin/time's peak RSS of the sync process. */
  peakRssBytes: number;
  sim: SimStats;
}

async function sync(sim: SimProcess, appId: string, database: string, o: { detailFetch: 'auto' | 'always'; pageSize?: number; requestsPerMinute?: number; concurrency?: number }): Promise<SyncRun> {
  await sim.resetStats();
  const args: SyncChildArgs = {
    database, appId, region: 'us', apiKey: KEY, ...(await sim.baseUrls(appId)), detailFetch: o.detailFetch,
    pageSize: o.pageSize ?? PAGE_SIZE, concurrency: o.concurrency ?? CONCURRENCY, requestsPerMinute: o.requestsPerMinute ?? UNPACED,
  };
  const { result, run } = await runScript<SyncChildResult>('bench/sync-child.ts', args, { time: true });
  if (!result.ok) throw new Error(`sync of ${appId} was not ok: ${result.status} ${result.error ?? ''}`);
  return { ...result, wallMs: run.wallMs, peakRssBytes: run.maxRssBytes ?? result.maxRssBytes, sim: await sim.stats(appId) };
}

/**
 * One `callsync sync` exactly as the nightly job runs it: `node dist/src/cli/main.js` (after `npm run
 * build`), a config file, the key in the environment, under /usr/bin/time. The memory figures come
 * from here. (The config caps requestsPerMinute at 100,000: fine for detailFetch auto.)
 */
async function syncCli(sim: SimProcess, appId: string, database: string, o: { detailFetch: 'auto' | 'always'; pageSize: number }): Promise<SyncRun> {
  await sim.resetStats();
  const config = join(work, `${appId}.config.json`);
  writeFileSync(config, JSON.stringify({
    database, detailFetch: o.detailFetch, pageSize: o.pageSize, concurrency: CONCURRENCY,
    apps: [{ appId, region: 'us', apiKeyEnv: 'CALLSYNC_BENCH_KEY', requestsPerMinute: 100_000, ...(await sim.baseUrls(appId)) }],
  }));
  const run = await runTimed(process.execPath, [join(REPO, 'dist/src/cli/main.js'), 'sync', '--config', config, '--no-progress'], { env: { PATH: process.env.PATH ?? '', CALLSYNC_BENCH_KEY: KEY } });
  // "app (us): ok [full]: 100 pages, 100000 calls listed, … (92543 from the list alone, 7457 needed Get Call), …; 7601 requests (101 list, 7457 get, 43 members), 0 retries, 0 rate-limited; 33.6 s"
  const line = run.stdout.trim();
  const num = (re: RegExp): number => Number(re.exec(line)?.[1] ?? NaN);
  if (run.code !== 0 || !line.includes(': ok [')) throw new Error(`callsync sync of ${appId} failed (exit ${run.code}): ${line} ${run.stderr.slice(-1500)}`);
  const sim1 = await sim.stats(appId);
  return {
    ok: true, status: 'ok', mode: /\[(\w+)\]/.exec(line)?.[1] ?? '', syncMs: num(/; ([\d.]+) s$/) * 1000,
    syncCpuMs: timeCpuMs(run.stderr), writeMs: NaN,
    callsSeen: num(/ (\d+) calls listed/), callsWritten: num(/ (\d+) written/), callsFromList: num(/\((\d+) from the list alone/),
    detailFetches: num(/ (\d+) needed Get Call/), pages: num(/: (\d+) pages/), requests: num(/; (\d+) requests/),
    requestsByKind: { list: sim1.list, get: sim1.get, members: sim1.members }, retries: num(/ (\d+) retries/), rateLimited: num(/ (\d+) rate-limited/),
    maxRssBytes: run.maxRssBytes ?? NaN, memoryAtEnd: { rss: NaN, heapTotal: NaN, heapUsed: NaN, external: NaN, arrayBuffers: NaN },
    wallMs: run.wallMs, peakRssBytes: run.maxRssBytes ?? NaN, sim: sim1,
  };
}

/** User + system CPU of a process run under /usr/bin/time -v, in ms. */
function timeCpuMs(stderr: string): number {
  const user = Number(/User time \(seconds\): ([\d.]+)/.exec(stderr)?.[1] ?? NaN);
  const system = Number(/System time \(seconds\): ([\d.]+)/.exec(stderr)?.[1] ?? NaN);
  return (user + system) * 1000;
}

const callsPerSec = (calls: number, ms: number): number => (calls / ms) * 1000;
const round = (x: number, d = 0): number => Math.round(x * 10 ** d) / 10 ** d;

// ---------------------------------------------------------------------------------------------
interface ThroughputRun {
  /** simCpuMs: CPU the simulator process used meanwhile. */
  bound: BoundResult & { callsPerSec: number; simCpuMs: number };
  full: SyncRun & { callsPerSec: number; simCpuMs: number };
  quiet: SyncRun;
  onePercent: SyncRun & { added: number };
  naive: NaiveResult & { callsPerSec: number };
  naiveDefaults: NaiveResult & { callsPerSec: number };
  ratioToBound: number;
  multipleOfNaive: number;
  multipleOfNaiveDefaults: number;
  quietFraction: number;
  onePercentFraction: number;
}

async function throughputPhase(): Promise<ThroughputRun[]> {
  const apps = Array.from({ length: RUNS }, (_, k) => ({ appId: `full${k + 1}`, region: 'us' as const, apiKey: KEY, calls: FULL_CALLS, seed: 7 }));
  const sim = await SimProcess.start({ apps: [...apps, { appId: 'naive', region: 'us', apiKey: KEY, calls: NAIVE_CALLS * 2, seed: 7 }] });
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
        ratioToBound: f.callsPerSec / b.callsPerSec,
        multipleOfNaive: f.callsPerSec / n.callsPerSec,
        multipleOfNaiveDefaults: f.callsPerSec / nd.callsPerSec,
        quietFraction: quiet.syncMs / f.syncMs,
        onePercentFraction: onePercent.syncMs / f.syncMs,
      });
      log(`  bound ${round(b.callsPerSec)} calls/s, sync ${round(f.callsPerSec)} calls/s (${round(f.callsPerSec / b.callsPerSec * 100)} %), naive ${round(n.callsPerSec)} / ${round(nd.callsPerSec)} calls/s; quiet ${round(quiet.syncMs)} ms, 1 % ${round(onePercent.syncMs)} ms`);
      rmSync(db, { force: true });
    }
  } finally {
    await sim.close();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
interface MemoryRun {
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
        log(`memory: ${calls}-call sync (callsync sync from dist/, detailFetch auto, pageSize ${MEMORY_PAGE_SIZE}) ${k + 1}/${n}`);
        runs.push(await syncCli(sim, `mem${calls}`, database, { detailFetch: 'auto', pageSize: MEMORY_PAGE_SIZE }));
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
interface PacedResult {
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
interface ReportsResult {
  calls: number;
  reconcileMs: number[];
  exportMs: number[];
  totalMs: number[];
}

async function buildDist(): Promise<void> {
  log('npm run build (the memory and report figures run dist/)');
  const build = await runTimed('npm', ['run', 'build'], { useTime: false });
  if (build.code !== 0) throw new Error(`npm run build failed: ${build.stdout.slice(-1000)}${build.stderr.slice(-1000)}`);
}

async function reportsPhase(database: string, calls: number): Promise<ReportsResult> {
  const cli = join(REPO, 'dist/src/cli/main.js');
  const out: ReportsResult = { calls, reconcileMs: [], exportMs: [], totalMs: [] };
  for (let k = 0; k < RUNS; k++) {
    log(`reports: reconcile and billing export over ${calls} calls ${k + 1}/${RUNS}`);
    const rec = await runTimed(process.execPath, [cli, 'reconcile', '--database', database, '--format', 'json'], { useTime: false });
    if (rec.code !== 0) throw new Error(`reconcile failed (${rec.code}): ${rec.stderr.slice(-1000)}`);
    const exp = await runTimed(process.execPath, [cli, 'export', 'billing', '--database', database, '--from', REPORT_FROM, '--to', REPORT_TO, '--out', join(work, 'billing.csv')], { useTime: false });
    if (exp.code !== 0) throw new Error(`export billing failed (${exp.code}): ${exp.stderr.slice(-1000)}`);
    out.reconcileMs.push(rec.wallMs);
    out.exportMs.push(exp.wallMs);
    out.totalMs.push(rec.wallMs + exp.wallMs);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
type Verdict = 'PASS' | 'FAIL' | 'info' | 'not run';
interface Row {
  figure: string;
  measured: string;
  target: string;
  verdict: Verdict;
  /** For a target that is missed: the measured cause and what would fix it (printed under the table). */
  cause?: string;
}

function pass(ok: boolean): Verdict {
  return ok ? 'PASS' : 'FAIL';
}

const t0 = Date.now();
const load0 = loadavg();
log(`${RUNS} run(s), full sync ${FULL_CALLS} calls${LARGE ? ', with the 1M-call rows' : ''}; work folder ${work}`);
if (!SKIP.has('memory') || !SKIP.has('reports')) await buildDist();
const throughput = SKIP.has('throughput') ? [] : await throughputPhase();
const memory = SKIP.has('memory') ? [] : await memoryPhase();
// Alone: a paced sync starved of CPU (beside the 1M-call sync, it was) sends late and uses less of its limit.
const paced = SKIP.has('paced') ? undefined : await pacedPhase();
const reportDb = memory.find((m) => m.calls === MEMORY_LARGE) ?? memory.find((m) => m.calls === MEMORY_SMALL);
const reports = SKIP.has('reports') || !reportDb ? undefined : await reportsPhase(reportDb.database, reportDb.calls);

const rows: Row[] = [];
const m = (xs: readonly number[]): number => median(xs);
if (throughput.length) {
  const t = throughput;
  const full = (f: (r: ThroughputRun) => number): number => m(t.map(f));
  rows.push({ figure: `bound: bare client, ${FULL_CALLS} calls (list + Get each, c=${CONCURRENCY}, pageSize ${PAGE_SIZE})`, measured: `${round(full((r) => r.bound.callsPerSec))} calls/s`, target: '', verdict: 'info' });
  rows.push({ figure: `naive: sequential Get + one autocommit insert per row, SQLite as the sync opens it (WAL, synchronous=NORMAL), ${NAIVE_CALLS} calls`, measured: `${round(full((r) => r.naive.callsPerSec))} calls/s`, target: '', verdict: 'info' });
  rows.push({ figure: `naive, SQLite defaults (rollback journal, synchronous=FULL), ${NAIVE_DEFAULTS_CALLS} calls`, measured: `${round(full((r) => r.naiveDefaults.callsPerSec))} calls/s`, target: '', verdict: 'info' });
  rows.push({
    figure: 'CPU per call (user + system, all threads): bound client / full sync process; the simulator meanwhile',
    measured: `${round(full((r) => (r.bound.cpuMs * 1000) / r.bound.calls))} µs / ${round(full((r) => (r.full.syncCpuMs * 1000) / r.full.callsSeen))} µs; simulator ${round(full((r) => (r.bound.simCpuMs * 1000) / r.bound.calls))} µs / ${round(full((r) => (r.full.simCpuMs * 1000) / r.full.callsSeen))} µs`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    figure: `full sync, empty db, detailFetch always, ${FULL_CALLS} calls`,
    measured: `${round(full((r) => r.full.callsPerSec))} calls/s, ${round(full((r) => r.full.syncMs) / 1000, 1)} s, ${round(full((r) => r.full.requests))} requests, peak RSS ${round(full((r) => r.full.peakRssBytes) / MB)} MB`,
    target: '',
    verdict: 'info',
  });
  rows.push({
    figure: 'full sync: wall time inside write transactions (SQLite, on the event loop), per call and share of the sync',
    measured: `${round(full((r) => (r.full.writeMs * 1000) / r.full.callsSeen))} µs, ${round(full((r) => r.full.writeMs / r.full.syncMs) * 100)} %`,
    target: '',
    verdict: 'info',
  });
  const ratio = full((r) => r.ratioToBound);
  const syncCpu = full((r) => (r.full.syncCpuMs * 1000) / r.full.callsSeen);
  const boundCpu = full((r) => (r.bound.cpuMs * 1000) / r.bound.calls);
  const writeCpu = full((r) => (r.full.writeMs * 1000) / r.full.callsSeen);
  const simCpu = full((r) => (r.full.simCpuMs * 1000) / r.full.callsSeen);
  const cause =
    `the sync spends ${round(syncCpu)} µs of CPU per call on one event loop where the bound spends ${round(boundCpu)} µs: ` +
    `${round(writeCpu)} µs in SQLite write transactions (this schema's five indexes and raw_json; INSERT…SELECT of the same rows costs ~40 µs per call in SQLite alone) ` +
    `and ~${round(syncCpu - writeCpu - boundCpu)} µs in validation, normalisation, fingerprints and JSON text for raw_json, plus garbage collection; ` +
    `the simulator takes ${round(simCpu)} µs per call of the same two cores. Fix: a writer thread for SQLite (measured ceiling with no writes at all: ~43 % of the bound here), ` +
    `then less work per call (one JSON.stringify per Get, one nesting walk); the target needs more cores than sync + simulator use here.`;
  rows.push({ figure: 'full sync as a fraction of the bound', measured: `${round(ratio * 100)} %`, target: '≥ 70 %', verdict: pass(ratio >= 0.7), cause });
  const mult = full((r) => r.multipleOfNaive);
  const boundMult = full((r) => r.bound.callsPerSec / r.naive.callsPerSec);
  rows.push({
    figure: 'full sync as a multiple of naive, same SQLite settings (per call)', measured: `${round(mult, 1)} × (the bound is ${round(boundMult, 1)} ×)`, target: '≥ 10 ×', verdict: pass(mult >= 10),
    cause: `the bound itself is only ${round(boundMult, 1)} × naive on this machine (the naive loop's cost is mostly waiting on sequential requests, not inserting), so 10 × naive needs ${round((10 / boundMult) * 100)} % of the bound: the same cause as the row above.`,
  });
  const multD = full((r) => r.multipleOfNaiveDefaults);
  rows.push({ figure: 'full sync as a multiple of naive with SQLite defaults', measured: `${round(multD, 1)} ×`, target: '(≥ 10 ×)', verdict: 'info' });
  const quietGets = Math.max(...t.map((r) => r.quiet.sim.get));
  const q = t.map((r) => r.quiet);
  rows.push({
    figure: `quiet re-run: requests by kind`,
    measured: `${m(q.map((r) => r.sim.list))} list, ${quietGets} get, ${m(q.map((r) => r.sim.members))} members`,
    target: '0 Get Call',
    verdict: pass(quietGets === 0),
  });
  const qf = full((r) => r.quietFraction);
  rows.push({ figure: `quiet re-run: wall time / full sync (${FULL_CALLS} calls)`, measured: `${round(qf * 100, 1)} % (${round(m(q.map((r) => r.syncMs)))} ms)`, target: '≤ 5 %', verdict: pass(qf <= 0.05) });
  const o = t.map((r) => r.onePercent);
  rows.push({
    figure: `1 % new re-run (${o[0]?.added ?? 0} new calls): requests, wall time / full sync`,
    measured: `${m(o.map((r) => r.sim.list))} list, ${m(o.map((r) => r.sim.get))} get, ${m(o.map((r) => r.sim.members))} members; ${round(full((r) => r.onePercentFraction) * 100, 1)} % (${round(m(o.map((r) => r.syncMs)))} ms)`,
    target: '',
    verdict: 'info',
  });
}
for (const mem of memory) {
  rows.push({
    figure: `memory: peak RSS of a ${mem.calls.toLocaleString('en-US')}-call first sync (callsync sync, auto, pageSize ${MEMORY_PAGE_SIZE})`,
    measured: `${round(m(mem.runs.map((r) => r.peakRssBytes)) / MB)} MB (${round(m(mem.runs.map((r) => r.syncMs)) / 1000, 1)} s, ${round(m(mem.runs.map((r) => callsPerSec(r.callsSeen, r.syncMs))))} calls/s)`,
    target: mem.calls === MEMORY_LARGE ? '< 300 MB' : '',
    verdict: mem.calls === MEMORY_LARGE ? pass(m(mem.runs.map((r) => r.peakRssBytes)) < 300 * MB) : 'info',
  });
}
const small = memory.find((x) => x.calls === MEMORY_SMALL);
const large = memory.find((x) => x.calls === MEMORY_LARGE);
if (small && large) {
  const ratio = m(large.runs.map((r) => r.peakRssBytes)) / m(small.runs.map((r) => r.peakRssBytes));
  rows.push({ figure: 'memory: peak RSS 1M / 100k', measured: `${round(ratio, 2)} ×`, target: '≤ 1.2 ×', verdict: pass(ratio <= 1.2) });
} else {
  rows.push({ figure: 'memory: 1,000,000-call sync', measured: '', target: '≤ 1.2 × 100k and < 300 MB', verdict: 'not run' });
}
if (paced) {
  const rl = paced.rateLimited;
  rows.push({
    figure: `rate-limited: ${RATE_LIMIT}/min enforced, ${rl.sim.requests} requests in ${round(rl.syncMs / 1000, 1)} s`,
    measured: `${round(rl.usedFraction * 100, 1)} % of the limit used, ${rl.sim.http429} × 429`,
    target: '≥ 95 %, 0 × 429',
    verdict: pass(rl.usedFraction >= 0.95 && rl.sim.http429 === 0),
  });
  const a = paced.freePlanAuto;
  const perCall = a.sim.requests / a.callsSeen;
  rows.push({
    figure: `requests per synced call, detailFetch auto, complete list entries (${FREE_PLAN_CALLS} calls, pageSize ${FREE_PLAN_PAGE_SIZE})`,
    measured: `${round(perCall, 4)} (${a.sim.requests} requests; ${a.sim.get} Gets of live calls)`,
    target: '≤ 0.02',
    verdict: pass(perCall <= 0.02),
  });
  rows.push({
    figure: `first ${FREE_PLAN_CALLS.toLocaleString('en-US')}-call sync at ${FREE_PLAN_LIMIT}/min enforced, auto, complete entries (measured)`,
    measured: `${round(a.syncMs / 1000, 1)} s: ${a.sim.list} list, ${a.sim.get} get, ${a.sim.members} members; ${a.sim.http429} × 429`,
    target: '< 60 s',
    verdict: pass(a.syncMs < 60_000 && a.sim.http429 === 0),
  });
  const v = paced.freePlanVaried;
  rows.push({
    figure: `the same, auto, when 5 % of list entries omit participants (computed: requests ÷ ${FREE_PLAN_LIMIT}/min)`,
    measured: `${v.sim.requests} requests (${round(v.sim.requests / v.callsSeen, 4)} per call; ${v.sim.get} Gets) → ${round(v.sim.requests / FREE_PLAN_LIMIT, 1)} min`,
    target: '',
    verdict: 'info',
  });
  const w = paced.freePlanAlways;
  rows.push({
    figure: `first ${FREE_PLAN_CALLS.toLocaleString('en-US')}-call sync at ${FREE_PLAN_LIMIT}/min, always (computed: requests ÷ ${FREE_PLAN_LIMIT}/min)`,
    measured: `${w.sim.requests} requests (${round(w.sim.requests / w.callsSeen, 3)} per call) → ${round(w.sim.requests / FREE_PLAN_LIMIT, 1)} min`,
    target: '',
    verdict: 'info',
  });
}
if (reports) {
  const total = m(reports.totalMs);
  rows.push({
    figure: `reconcile + billing export over ${reports.calls.toLocaleString('en-US')} calls (node dist/, each a process)`,
    measured: `${round(total / 1000, 1)} s (reconcile ${round(m(reports.reconcileMs) / 1000, 1)} s, export ${round(m(reports.exportMs) / 1000, 1)} s)`,
    target: reports.calls === MEMORY_LARGE ? '≤ 10 s' : '≤ 10 s at 1M (--large)',
    verdict: reports.calls === MEMORY_LARGE ? pass(total <= 10_000) : 'info',
  });
}

const table = new Table({ head: ['figure', 'measured (median)', 'target', ''], style: { head: [], border: [] }, colWidths: [58, 62, 16, 9], wordWrap: true });
for (const r of rows) table.push([r.figure, r.measured, r.target, r.verdict]);
const load1 = loadavg();
const header = `callsync bench: ${RUNS} run(s), node ${process.version}, ${cpus().length} cores, ${round(totalmem() / 1024 ** 3)} GB; load average ${load0.map((x) => x.toFixed(2)).join(' ')} → ${load1.map((x) => x.toFixed(2)).join(' ')}; ${round((Date.now() - t0) / 1000)} s`;
const causes = rows.filter((r) => r.verdict === 'FAIL' && r.cause).map((r) => `FAIL ${r.figure}: ${r.cause}`);
process.stdout.write(`${header}\n${table.toString()}\n${causes.length ? `${causes.join('\n')}\n` : ''}`);
const report = {
  startedAt: new Date(t0).toISOString(),
  durationS: round((Date.now() - t0) / 1000),
  machine: { node: process.version, cores: cpus().length, memGb: round(totalmem() / 1024 ** 3), loadavgStart: load0, loadavgEnd: load1 },
  settings: { runs: RUNS, fullCalls: FULL_CALLS, concurrency: CONCURRENCY, pageSize: PAGE_SIZE, naiveCalls: NAIVE_CALLS, large: LARGE, memoryPageSize: MEMORY_PAGE_SIZE, freePlanPageSize: FREE_PLAN_PAGE_SIZE, rateLimit: RATE_LIMIT, freePlanLimit: FREE_PLAN_LIMIT },
  table: rows,
  throughput,
  memory: memory.map((x) => ({ calls: x.calls, runs: x.runs })),
  paced,
  reports,
};
writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
log(`wrote ${join('bench', 'results', 'latest.json')}`);
rmSync(work, { recursive: true, force: true });
process.exitCode = rows.some((r) => r.verdict === 'FAIL') ? 1 : 0;
