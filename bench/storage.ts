/**
 * `npm run bench:storage [-- --calls N]` (and the end of `npm run bench`): bytes per call of a SQLite
 * database after a full `callsync sync` of N calls (default 200,000; issue 16's target ≤ 2,500),
 * with what each table and index takes (SQLite's dbstat). The sync is the CLI a user runs, as a
 * subprocess (bench/cli-sync.ts: the bin on the built dist/, which `npm run bench:storage` builds first),
 * against the simulator in its own process, with the config's defaults (detailFetch auto).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { BENCH_KEY, syncCli } from './cli-sync.js';
import { SimProcess } from './lib.js';

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

/** Syncs `calls` calls from a fresh simulator into a fresh SQLite file and measures it. */
export async function measureStorage(calls = 200_000): Promise<StorageFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'callsync-bench-storage-'));
  const sim = await SimProcess.start({ apps: [{ appId: 'bench-app', region: 'us', apiKey: BENCH_KEY, calls, seed: 1 }], port: 0 });
  try {
    const database = join(dir, 'storage.db');
    // The config's defaults (detailFetch auto, pageSize 100, concurrency 8), unpaced on the simulator.
    await syncCli(sim, 'bench-app', database, dir, { detailFetch: 'auto', pageSize: 100, concurrency: 8, requestsPerMinute: 'unlimited' });
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
