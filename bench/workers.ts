/**
 * `npm run bench:workers [-- --apps 60 --calls 300 --workers 3 --latency 50 --rpm 600]`: the wall time of one
 * tick of `callsync schedule` on PostgreSQL with one worker, then with N workers, each on a fresh
 * database. The tick is queued by `schedule --run-now` (itself a worker: N-1 long-running workers
 * run beside it) and timed from its start to its exit, which is when the tick's finish job has run.
 * The simulator runs in its own process with `--latency` ms per request, and each app is paced to
 * `--rpm` requests a minute (its plan's rate limit; 0 = unlimited), standing in for the real service:
 * what several workers win is more apps in flight at once, each at its own rate, not CPU.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pgExec } from '../test/helpers/databases.js';
import { CLI_MAIN, REPO, SimProcess } from './lib.js';

const { values } = parseArgs({
  options: {
    apps: { type: 'string', default: '60' },
    calls: { type: 'string', default: '300' },
    workers: { type: 'string', default: '3' },
    latency: { type: 'string', default: '50' },
    rpm: { type: 'string', default: '600' },
  },
});
const apps = Array.from({ length: Number(values.apps) }, (_, i) => `wb${String(i + 1).padStart(3, '0')}`);
const calls = Number(values.calls);
const workers = Math.max(2, Number(values.workers));
const KEY = 'bench-key-not-secret';
const ADMIN = process.env.CALLSYNC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(tmpdir(), 'callsync-workers-'));
spawnSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'ignore' });

const admin = (q: string): Promise<void> => pgExec(ADMIN, q);

const sim = await SimProcess.start({ apps: apps.map((appId, i) => ({ appId, region: 'us', apiKey: KEY, calls, seed: 300 + i })), faults: { latencyMs: Number(values.latency) } });
const baseUrls = await Promise.all(apps.map((a) => sim.baseUrls(a)));

function cli(args: string[]): ChildProcess {
  return spawn(process.execPath, [CLI_MAIN, ...args], { env: { PATH: process.env.PATH ?? '', BENCH_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function exited(c: ChildProcess): Promise<number | null> {
  return new Promise((r) => (c.exitCode !== null ? r(c.exitCode) : c.on('close', r)));
}

function ready(ws: ChildProcess[]): Promise<void[]> {
  return Promise.all(ws.map((w) => new Promise<void>((resolve) => w.stdout!.on('data', (d: Buffer) => d.toString().includes('worker on the job engine') && resolve()))));
}

/** One tick with `n` workers on a fresh database: seconds from --run-now's start to its exit. */
async function tick(n: number): Promise<number> {
  const name = `callsync_bench_workers_${process.pid}_${n}`;
  await admin(`drop database if exists ${name} with (force)`);
  await admin(`create database ${name}`);
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  const cfg = join(dir, `cfg-${n}.json`);
  writeFileSync(cfg, JSON.stringify({
    database: u.toString(),
    apps: apps.map((appId, i) => ({ appId, region: 'us', apiKeyEnv: 'BENCH_KEY', requestsPerMinute: Number(values.rpm) > 0 ? Number(values.rpm) : 'unlimited', ...baseUrls[i] })),
    schedule: { reconcile: false, exportDayOfMonth: 0, pollIntervalSeconds: 0.5 },
  }));
  // Our tables and the engine's schema first (a worker started and stopped), so that installing
  // them is in neither timed tick.
  const migrate = cli(['migrate', '--config', cfg]);
  if ((await exited(migrate)) !== 0) throw new Error('migrate failed');
  const installer = cli(['schedule', '--config', cfg]);
  await ready([installer]);
  installer.kill('SIGTERM');
  await exited(installer);
  const others = Array.from({ length: n - 1 }, () => cli(['schedule', '--config', cfg]));
  await ready(others);
  const t0 = performance.now();
  const now = cli(['schedule', '--config', cfg, '--run-now', '--quiet']);
  let err = '';
  now.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await exited(now);
  const seconds = (performance.now() - t0) / 1000;
  for (const w of others) w.kill('SIGTERM');
  await Promise.all(others.map(exited));
  await admin(`drop database if exists ${name} with (force)`);
  if (code !== 0) throw new Error(`tick with ${n} worker(s): exit ${code}\n${err}`);
  return seconds;
}

console.log(`one tick of ${apps.length} apps × ${calls} calls (simulator latency ${values.latency} ms, ${Number(values.rpm) > 0 ? `${values.rpm} requests/min per app` : 'no rate limit'}, 4 apps per worker), on PostgreSQL:`);
const one = await tick(1);
console.log(`1 worker:  ${one.toFixed(1)} s`);
const many = await tick(workers);
console.log(`${workers} workers: ${many.toFixed(1)} s (${(one / many).toFixed(2)} × faster; same run)`);
await sim.close();
rmSync(dir, { recursive: true, force: true });
