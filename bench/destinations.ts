/**
 * `npm run bench:destinations [-- --calls 100000 --runs 1]`: the same first sync into each destination
 * (a SQLite file, a fresh PostgreSQL database), `callsync sync` from dist/ as a child process under
 * /usr/bin/time, against one simulator (this process). Prints wall time, calls/s, requests and the
 * child's peak RSS per destination (median of --runs).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startSimulator } from '../src/simulator/index.js';
import { pgExec } from '../test/helpers/databases.js';
import { CLI_MAIN, REPO } from './lib.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '100000' }, runs: { type: 'string', default: '1' } } });
const calls = Number(values.calls);
const runs = Math.max(1, Number(values.runs));
const KEY = 'bench-key-not-secret';
const ADMIN = process.env.CALLSYNC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(tmpdir(), 'callsync-dest-'));
spawnSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'ignore' });
const sim = await startSimulator({ apps: [{ appId: 'dest', region: 'us', apiKey: KEY, calls, seed: 5 }], port: 0 });

const admin = (q: string): Promise<void> => pgExec(ADMIN, q);

async function once(dest: 'sqlite' | 'postgres', i: number): Promise<{ wall: number; rssMb: number; line: string }> {
  let database = join(dir, `dest-${i}.db`);
  const pgName = `callsync_bench_${process.pid}_${i}`;
  if (dest === 'postgres') {
    await admin(`create database ${pgName}`);
    const u = new URL(ADMIN);
    u.pathname = `/${pgName}`;
    database = u.toString();
  }
  const cfg = join(dir, `cfg-${dest}-${i}.json`);
  writeFileSync(cfg, JSON.stringify({ database, apps: [{ appId: 'dest', region: 'us', apiKeyEnv: 'DEST_KEY', requestsPerMinute: 'unlimited', ...sim.baseUrls('dest') }] }));
  const t0 = performance.now();
  const child = spawn('/usr/bin/time', ['-v', process.execPath, CLI_MAIN, 'sync', '--config', cfg, '--no-progress'], {
    env: { PATH: process.env.PATH ?? '', DEST_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const wall = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`${dest}: exit ${code}\n${out}\n${err}`);
  if (dest === 'postgres') await admin(`drop database if exists ${pgName} with (force)`);
  const rss = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(err)?.[1] ?? 0) / 1024;
  return { wall, rssMb: rss, line: out.trim() };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`first sync of ${calls} calls (detailFetch auto, pageSize 100, concurrency 8), median of ${runs}:`);
for (const dest of ['sqlite', 'postgres'] as const) {
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await once(dest, i));
  const wall = median(results.map((r) => r.wall));
  const requests = /(\d+) requests \((\d+) list, (\d+) get/.exec(results[0]!.line);
  console.log(`${dest.padEnd(8)} ${wall.toFixed(1)} s wall, ${Math.round(calls / wall)} calls/s, peak RSS ${median(results.map((r) => r.rssMb)).toFixed(0)} MB, ${requests ? `${requests[1]} requests (${requests[2]} list, ${requests[3]} get)` : ''}`);
}
await sim.close();
rmSync(dir, { recursive: true, force: true });
