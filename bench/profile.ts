/**
 * Where the CPU row's gap goes, function by function: `callsync sync` (detailFetch always, the bin as
 * a process, as `npm run bench` runs it) and the bare client (bench/bound-client.ts) each run once
 * under Node's `--cpu-prof` against the bench simulator, and their main threads' self time is
 * printed per call, side by side, largest first. Also each process's CPU (user + sys) per call,
 * and the main thread's busy time, garbage collection and idle time.
 *
 *   npm run bench:profile [-- --calls 50000 --top 30 --keep]
 *
 * Why a script: sessions 17–26 each rebuilt this by hand in /tmp to find the next cost to remove.
 * Self time is the function's own, not its callees': SQLite's statements show as Kysely's
 * `executeQuery` (the native call is not a frame of its own), JSON.stringify as its caller, socket
 * writes as `writeLatin1String`. The profiler costs both processes some 10–20 %; compare the two
 * columns with each other, never with `npm run bench`'s figures. `--keep` leaves the two
 * .cpuprofile files in bench/results/ (Chrome DevTools opens them).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import type { BoundArgs } from './bound-client.js';
import { BENCH_KEY, timeCpuMs } from './cli-sync.js';
import { BIN_PATH, CALLSYNC_BIN, REPO, runTimed, SimProcess } from './lib.js';

const { values: flags } = parseArgs({ options: { calls: { type: 'string', default: '50000' }, top: { type: 'string', default: '30' }, keep: { type: 'boolean', default: false } } });
const CALLS = Number(flags.calls);
const TOP = Number(flags.top);
if (!(Number.isInteger(CALLS) && CALLS >= 1000) || !(Number.isInteger(TOP) && TOP >= 1)) throw new Error('--calls N (an integer ≥ 1000) and --top K (≥ 1)');

const KEY_ENV = 'CALLSYNC_BENCH_KEY';
const PAGE_SIZE = 100;
const CONCURRENCY = 8;

/** The parts of a .cpuprofile this script reads (Chrome's Profile format, as Node writes it). */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time in µs by function (name and where it is defined), over the whole profile. */
function selfTimes(p: CpuProfile): Map<string, number> {
  const byNode = new Map<number, number>();
  p.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const out = new Map<string, number>();
  for (const n of p.nodes) {
    const t = byNode.get(n.id) ?? 0;
    if (t === 0) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    // The bundle's chunk names change with every build: keep the file's last two path parts and the line.
    const where = url ? ` ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'}${where}`;
    out.set(key, (out.get(key) ?? 0) + t);
  }
  return out;
}

/** Node writes one profile per thread (tsx adds a loader thread): the main thread's is the largest. */
function mainProfile(dir: string): { path: string; profile: CpuProfile } {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
  if (files.length === 0) throw new Error(`no .cpuprofile written in ${dir}`);
  const path = files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
  return { path, profile: JSON.parse(readFileSync(path, 'utf8')) as CpuProfile };
}

interface Profiled {
  cpuUsPerCall: number;
  self: Map<string, number>;
  path: string;
}

async function profiled(name: string, args: string[], env: NodeJS.ProcessEnv, work: string): Promise<Profiled> {
  const dir = join(work, name);
  mkdirSync(dir);
  const run = await runTimed(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...args], { env });
  if (run.code !== 0) throw new Error(`${name} failed (exit ${run.code}): ${run.stderr.slice(-1500)} ${run.stdout.slice(-500)}`);
  if (name === 'sync' && !/"status":"ok"/.test(run.stdout)) throw new Error(`the sync did not end ok: ${run.stdout.slice(-800)}`);
  const { path, profile } = mainProfile(dir);
  return { cpuUsPerCall: (timeCpuMs(run.stderr) * 1000) / CALLS, self: selfTimes(profile), path };
}

const work = mkdtempSync(join(tmpdir(), 'callsync-profile-'));
const sim = await SimProcess.start({ apps: ['sync', 'bare'].map((appId) => ({ appId, region: 'us' as const, apiKey: BENCH_KEY, calls: CALLS, seed: 7 })) });
let sync: Profiled;
let bare: Profiled;
try {
  const config = join(work, 'sync.json');
  writeFileSync(config, JSON.stringify({
    database: join(work, 'sync.sqlite'), detailFetch: 'always', pageSize: PAGE_SIZE, concurrency: CONCURRENCY,
    apps: [{ appId: 'sync', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 'unlimited', ...(await sim.baseUrls('sync')) }],
  }));
  console.error(`callsync sync, ${CALLS} calls, under --cpu-prof`);
  sync = await profiled('sync', [CALLSYNC_BIN, 'sync', '--config', config, '--json'], { PATH: BIN_PATH, [KEY_ENV]: BENCH_KEY }, work);
  const bound: BoundArgs = { callsBaseUrl: (await sim.baseUrls('bare')).callsBaseUrl, apiKey: BENCH_KEY, pageSize: PAGE_SIZE, concurrency: CONCURRENCY };
  console.error(`bare client, ${CALLS} calls, under --cpu-prof`);
  bare = await profiled('bare', ['--import', 'tsx', 'bench/bound-client.ts', JSON.stringify(bound)], process.env, work);
  if (flags.keep) {
    const results = join(REPO, 'bench/results');
    mkdirSync(results, { recursive: true });
    for (const [name, p] of [['sync', sync], ['bare', bare]] as const) writeFileSync(join(results, `profile.${name}.cpuprofile`), readFileSync(p.path));
  }
} finally {
  await sim.close();
  rmSync(work, { recursive: true, force: true });
}

const perCall = (us: number | undefined): string => ((us ?? 0) / CALLS).toFixed(2);
const sum = (m: Map<string, number>, keep: (k: string) => boolean): number => [...m].reduce((s, [k, v]) => (keep(k) ? s + v : s), 0);
const idle = (k: string): boolean => k.startsWith('(idle)');
const gc = (k: string): boolean => k.startsWith('(garbage collector)');

const head = new Table({ head: ['per call', 'callsync sync', 'bare client', 'sync / bare'] });
const row = (what: string, s: number, b: number): void => void head.push([what, `${s.toFixed(1)} µs`, `${b.toFixed(1)} µs`, `${(s / b).toFixed(2)} ×`]);
row('CPU of the process (user + sys, under the profiler)', sync.cpuUsPerCall, bare.cpuUsPerCall);
row('main thread busy (profile, idle left out)', sum(sync.self, (k) => !idle(k)) / CALLS, sum(bare.self, (k) => !idle(k)) / CALLS);
row('of which garbage collection', sum(sync.self, gc) / CALLS, sum(bare.self, gc) / CALLS);
console.log(head.toString());

const top = new Table({ head: ['self time of', 'sync µs/call', 'bare µs/call'], colWidths: [78, 14, 14], wordWrap: true });
for (const [k, v] of [...sync.self].filter(([k]) => !idle(k)).sort((a, b) => b[1] - a[1]).slice(0, TOP)) top.push([k, perCall(v), bare.self.has(k) ? perCall(bare.self.get(k)) : '']);
console.log(top.toString());
