/**
 * The CPU row of issue 16 counted in instructions, not seconds: `callsync sync` (detailFetch always,
 * the bin as a process) and the bare client (bench/bound-client.ts) each run under valgrind's
 * callgrind at two sizes against the bench simulator, and the difference of the two runs' totals
 * over the difference of their calls is the instructions one more call costs. Process start, module
 * loading, migrations and most JIT warm-up cancel out; what is left is the steady state.
 *
 * Why: on these shared two-core machines CPU seconds drift up to 2× within minutes, so a change of a
 * few per cent to the sync cannot be seen in `npm run bench` (±10 % between runs of the same build).
 * The sync's count per call moves ~3 % between runs of the same build (the bare client's, smaller,
 * up to 9 %: warm-up and collections weigh more in it), so a change of a few per cent to the sync
 * can be judged over a few runs. It is not the target (the kernel's side of each request is not
 * counted, nor cache misses), only the way to see which way a change moves it.
 *
 *   npm run bench:instructions [-- --small 2000 --large 6000 --keep]
 *
 * ~6 minutes at the defaults (valgrind runs Node ~50× slower). `--keep` leaves the callgrind files
 * in bench/results/ for `callgrind_annotate`. Needs valgrind (Debian's package; on every machine here).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_KEY } from './cli-sync.js';
import { CALLSYNC_BIN, REPO, runTimed, SimProcess } from './lib.js';
import type { BoundArgs } from './bound-client.js';

const { values: flags } = parseArgs({ options: { small: { type: 'string', default: '2000' }, large: { type: 'string', default: '6000' }, keep: { type: 'boolean', default: false } } });
const SMALL = Number(flags.small);
const LARGE = Number(flags.large);
if (!(SMALL >= 100 && LARGE >= SMALL + 1000)) throw new Error('--small N (≥ 100) and --large M (≥ N + 1000): the calls of the two runs whose difference is measured');
if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is needed (apt-get install -y valgrind)');

const KEY_ENV = 'CALLSYNC_BENCH_KEY';
const PAGE_SIZE = 100;
const CONCURRENCY = 8;
const work = mkdtempSync(join(tmpdir(), 'callsync-instructions-'));
const results = join(REPO, 'bench/results');
mkdirSync(results, { recursive: true });

/** Runs `args` (a node command line) under callgrind; returns the instructions it executed. */
async function instructions(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const out = flags.keep ? join(results, `callgrind.${name}.out`) : join(work, `${name}.out`);
  const run = await runTimed('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath, ...args], { env, useTime: false });
  const ir = /Collected : (\d+)/.exec(run.stderr)?.[1];
  if (run.code !== 0 || ir === undefined) throw new Error(`${name} failed under valgrind (exit ${run.code}): ${run.stderr.slice(-1500)} ${run.stdout.slice(-500)}`);
  if (name.startsWith('sync') && !/"status":"ok"/.test(run.stdout)) throw new Error(`${name} did not end ok: ${run.stdout.slice(-800)}`);
  return Number(ir);
}

const sizes = [SMALL, LARGE];
const sim = await SimProcess.start({ apps: sizes.flatMap((n) => [`sync${n}`, `bare${n}`].map((appId) => ({ appId, region: 'us' as const, apiKey: BENCH_KEY, calls: n, seed: 7 }))) });
const ir: Record<string, number> = {};
try {
  for (const n of sizes) {
    const config = join(work, `sync${n}.json`);
    writeFileSync(config, JSON.stringify({
      database: join(work, `sync${n}.sqlite`), detailFetch: 'always', pageSize: PAGE_SIZE, concurrency: CONCURRENCY,
      apps: [{ appId: `sync${n}`, region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 'unlimited', ...(await sim.baseUrls(`sync${n}`)) }],
    }));
    console.error(`callsync sync, ${n} calls, under callgrind`);
    ir[`sync${n}`] = await instructions(`sync${n}`, [CALLSYNC_BIN, 'sync', '--config', config, '--json'], { PATH: process.env.PATH, [KEY_ENV]: BENCH_KEY });
    const bound: BoundArgs = { callsBaseUrl: (await sim.baseUrls(`bare${n}`)).callsBaseUrl, apiKey: BENCH_KEY, pageSize: PAGE_SIZE, concurrency: CONCURRENCY };
    console.error(`bare client, ${n} calls, under callgrind`);
    ir[`bare${n}`] = await instructions(`bare${n}`, ['--import', 'tsx', 'bench/bound-client.ts', JSON.stringify(bound)], process.env);
  }
} finally {
  await sim.close();
  rmSync(work, { recursive: true, force: true });
}

const perCall = (kind: 'sync' | 'bare'): number => (ir[`${kind}${LARGE}`]! - ir[`${kind}${SMALL}`]!) / (LARGE - SMALL);
const sync = perCall('sync');
const bare = perCall('bare');
const fixed = ir[`sync${SMALL}`]! - SMALL * sync;
console.log(`instructions per call, ${SMALL} → ${LARGE} calls (detailFetch always): callsync sync ${Math.round(sync).toLocaleString('en')}, bare client ${Math.round(bare).toLocaleString('en')}: ${(sync / bare).toFixed(2)} ×`);
console.log(`callsync sync beyond that per call (Node's start, modules, migrations, JIT warm-up): ${(fixed / 1e9).toFixed(2)} G instructions, ${Math.round(fixed / 50_000).toLocaleString('en')} a call over 50,000 calls`);
writeFileSync(join(results, 'instructions.json'), `${JSON.stringify({ at: new Date().toISOString(), small: SMALL, large: LARGE, instructions: ir, syncPerCall: sync, barePerCall: bare, ratio: sync / bare, syncFixed: fixed }, null, 2)}\n`);
