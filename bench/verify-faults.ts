/**
 * End-to-end check with measurement: the simulator (this process) serves N calls with faults on;
 * `callsync sync` runs as a real subprocess under /usr/bin/time; the database must then equal the
 * simulator's ground truth. Prints wall time, requests and peak RSS of each run.
 *
 *   npx tsx bench/verify-faults.ts [--calls 10000] [--always]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startSimulator, type FaultProfile } from '../src/simulator/index.js';
import { openSqliteStore } from '../src/store/connection.js';
import { integrityProblems } from '../test/helpers/db-dump.js';
import { diffAgainstTruth } from '../test/helpers/truth-diff.js';
import { CLI_MAIN, REPO } from './lib.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '10000' }, always: { type: 'boolean', default: false } } });
const calls = Number(values.calls);
const KEY = 'verify-key-7c1e';
const faults: FaultProfile = {
  http429Rate: 0.002, http5xxRate: 0.02, resetRate: 0.01, truncateRate: 0.01, stallRate: 0.002, stallMs: 5_000,
  notFoundCalls: 10, malformedCalls: 5, insertWhilePaging: { afterPage: 3, count: 12 }, removeWhilePaging: { afterPage: 5, count: 3 },
};
const dir = mkdtempSync(join(tmpdir(), 'callsync-verify-'));
const sim = await startSimulator({ apps: [{ appId: 'verify', region: 'us', apiKey: KEY, calls, seed: 11 }], faults, port: 0 });
const before = new Set(sim.truth('verify').calls.keys());
const db = join(dir, 'verify.db');
const cfg = join(dir, 'config.json');
writeFileSync(cfg, JSON.stringify({
  database: db, requestTimeoutMs: 2000, maxAttempts: 8, detailFetch: values.always ? 'always' : 'auto',
  apps: [{ appId: 'verify', region: 'us', apiKeyEnv: 'VERIFY_KEY', requestsPerMinute: 'unlimited', ...sim.baseUrls('verify') }],
}));

/** Runs `callsync sync` from dist/ under /usr/bin/time (asynchronously: this process serves the simulator). */
async function run(label: string): Promise<void> {
  const t0 = performance.now();
  const child = spawn('/usr/bin/time', ['-v', process.execPath, CLI_MAIN, 'sync', '--config', cfg], {
    env: { PATH: process.env.PATH ?? '', VERIFY_KEY: KEY, CALLSYNC_RETRY_BASE_MS: '50' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const wall = (performance.now() - t0) / 1000;
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(err)?.[1];
  console.log(`${label}: exit ${code}, wall ${wall.toFixed(2)} s, peak RSS ${rss ? (Number(rss) / 1024).toFixed(0) : '?'} MB`);
  console.log(`  ${out.trim().split('\n').join('\n  ')}`);
  const problems = err.split('\n').filter((l) => l.startsWith('callsync') || l.startsWith('  error'));
  if (problems.length) console.log(`  ${problems.join('\n  ')}`);
}

spawnSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'ignore' });
await run('first sync');
await run('second sync');
const after = sim.truth('verify');
const removed = new Set([...before].filter((id) => !after.calls.has(id)));
const store = openSqliteStore(db);
const diff = await diffAgainstTruth(store.db, after, { allowExtra: removed });
const integrity = await integrityProblems(store.db);
await store.close();
const st = sim.stats('verify');
console.log(`simulator: ${st.requests} requests (${st.list} list, ${st.get} get), faults: ${st.http429} 429, ${st.http5xx} 5xx, ${st.reset} resets, ${st.truncate} truncated, ${st.stall} stalls, ${st.notFound} not found`);
console.log(`ground truth: ${after.calls.size} calls, ${after.notFound.size} not found, ${after.malformed.size} malformed, ${removed.size} removed while paging`);
console.log(diff.length === 0 && integrity.length === 0 ? 'RESULT: database equals the ground truth; integrity_check ok' : `RESULT: ${diff.length} differences, e.g.\n${diff.slice(0, 10).join('\n')}\n${integrity.join('\n')}`);
await sim.close();
rmSync(dir, { recursive: true, force: true });
process.exitCode = diff.length === 0 && integrity.length === 0 ? 0 : 1;
