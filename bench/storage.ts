/**
 * `npm run bench:storage [-- --calls N]` (and the end of `npm run bench`): bytes per call of a SQLite
 * database after a full `callsync sync` of N calls (default 200,000; issue 16's target ≤ 2,500),
 * with what each table and index takes (SQLite's dbstat). The sync is the CLI a user runs, as a
 * subprocess (the built dist/ when present, else through tsx), against the simulator in its own
 * process, with the default detailFetch (auto).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { REPO, SimProcess } from './lib.js';

export const BYTES_PER_CALL_TARGET = 2500;

export interface StorageFigures {
  calls: number;
  /** Database file size (page_count × page_size, WAL checkpointed) over the calls stored. */
  bytesPerCall: number;
  pageSize: number;
  /** Bytes per call of each table and index, largest first. */
  perTable: { name: string; bytesPerCall: number }[];
}

/** Bytes of each table and index of a SQLite database, from dbstat, per stored call. */
export function measureDatabase(path: string): StorageFigures {
  const db = new Database(path);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const calls = (db.prepare('select count(*) as n from calls').get() as { n: number }).n;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const pages = db.pragma('page_count', { simple: true }) as number;
    const rows = db.prepare('select name, sum(pgsize) as bytes from dbstat group by name order by bytes desc').all() as { name: string; bytes: number }[];
    const per = (b: number): number => Math.round((b / Math.max(1, calls)) * 10) / 10;
    return { calls, bytesPerCall: per(pages * pageSize), pageSize, perTable: rows.map((r) => ({ name: r.name, bytesPerCall: per(r.bytes) })) };
  } finally {
    db.close();
  }
}

function runSync(config: string, env: Record<string, string>): Promise<void> {
  const dist = join(REPO, 'dist/src/cli/main.js');
  const args = existsSync(dist) ? [dist] : ['--import', 'tsx', join(REPO, 'src/cli/main.ts')];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args, 'sync', '--config', config, '--no-progress'], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callsync sync exited ${code}: ${err.slice(-2000)}`))));
  });
}

/** Syncs `calls` calls from a fresh simulator into a fresh SQLite file and measures it. */
export async function measureStorage(calls = 200_000): Promise<StorageFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'callsync-bench-storage-'));
  const sim = await SimProcess.start({ apps: [{ appId: 'bench-app', region: 'us', apiKey: 'bench-key', calls, seed: 1 }], port: 0 });
  try {
    const database = join(dir, 'storage.db');
    const config = join(dir, 'config.json');
    const app = { appId: 'bench-app', region: 'us', apiKeyEnv: 'CALLSYNC_BENCH_KEY', requestsPerMinute: 'unlimited', ...(await sim.baseUrls('bench-app')) };
    writeFileSync(config, JSON.stringify({ database, apps: [app] }));
    await runSync(config, { CALLSYNC_BENCH_KEY: 'bench-key' });
    return measureDatabase(database);
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The report's lines: the figure against its target, then what each table and index takes. */
export function formatStorage(f: StorageFigures): string {
  const ratio = f.bytesPerCall / BYTES_PER_CALL_TARGET;
  const lines = [
    `database size at ${f.calls.toLocaleString('en-US')} calls: ${Math.round(f.bytesPerCall)} bytes per call (target ≤ ${BYTES_PER_CALL_TARGET}: ${ratio.toFixed(2)}× the target, ${ratio <= 1 ? 'met' : 'NOT met'}; ${f.pageSize}-byte pages)`,
  ];
  // The tables and indexes over 0.5 % of the total each; the small ones (an empty table is one page) summed.
  const big = f.perTable.filter((x) => x.bytesPerCall >= f.bytesPerCall * 0.005);
  const rest = f.perTable.filter((x) => !big.includes(x)).reduce((n, x) => n + x.bytesPerCall, 0);
  for (const t of [...big, { name: `(${f.perTable.length - big.length} others)`, bytesPerCall: rest }]) lines.push(`  ${t.name.padEnd(40)} ${t.bytesPerCall.toFixed(1).padStart(8)}`);
  return lines.join('\n');
}

/** The storage phase of `npm run bench` (bench/optional-phases.ts loads it by this name). */
export function storageBench(calls: number): Promise<StorageFigures> {
  return measureStorage(calls);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '200000' } } });
  const figures = await measureStorage(Math.max(1000, Number(values.calls) || 200_000));
  process.stdout.write(`${formatStorage(figures)}\n`);
}
