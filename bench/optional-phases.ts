/**
 * The storage and query figures of issue 16 come from their own files, each measuring on a database
 * it builds itself: bench/storage.ts (bytes per call) and bench/queries.ts (the five finance
 * questions, public schema against a lean layout, and reconcile + billing export). bench/run.ts
 * reaches them only through this small interface, loaded when their phase runs, so that either file
 * can change inside without touching the table, and a phase skipped with `--skip storage,queries`
 * needs neither file. What they return is checked here: a figure that is not a number fails the run
 * instead of printing NaN.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface StorageFigures {
  calls: number;
  bytesPerCall: number;
  /** Bytes by table (and index), as bench/storage.ts reports them: kept in latest.json. */
  perTable: unknown;
}

export interface QueryRow {
  question: string;
  publicMs: number;
  leanMs: number;
  /** publicMs / leanMs. */
  ratio: number;
  /** The largest ratio allowed (2). */
  target: number;
}

export interface QueryFigures {
  calls: number;
  rows: QueryRow[];
  /** `callsync reconcile` and `callsync export billing` over the same database, each a process. */
  reconcileMs: number;
  exportMs: number;
}

/** Where each phase's function lives, and its name: (calls, { dir, runs }) => Promise<figures>. */
const SOURCES = {
  storage: { file: 'storage.ts', name: 'storageBench' },
  queries: { file: 'queries.ts', name: 'queryBench' },
} as const;

type Phase = keyof typeof SOURCES;

/** Fails before any phase runs when a phase that is not skipped has no file to measure it. */
export function checkPhaseSources(skip: ReadonlySet<string>): void {
  for (const [phase, s] of Object.entries(SOURCES)) {
    if (skip.has(phase)) continue;
    if (!existsSync(fileURLToPath(new URL(`./${s.file}`, import.meta.url)))) {
      throw new Error(`bench/${s.file} is not there: the ${phase} figures need it (exporting ${s.name}); add it, or pass --skip ${phase}`);
    }
  }
}

async function load(phase: Phase): Promise<(calls: number, opts: { dir: string; runs: number }) => Promise<unknown>> {
  const s = SOURCES[phase];
  // A computed specifier: the file need not exist for the rest of the bench to typecheck and run.
  const mod = (await import(new URL(`./${s.file}`, import.meta.url).href)) as Record<string, unknown>;
  const fn = mod[s.name];
  if (typeof fn !== 'function') throw new Error(`bench/${s.file} does not export ${s.name}(calls, { dir, runs })`);
  return fn as (calls: number, opts: { dir: string; runs: number }) => Promise<unknown>;
}

function num(from: string, what: string, x: unknown): number {
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error(`${from} returned ${what} = ${String(x)}, not a number`);
  return x;
}

export async function storagePhase(calls: number, dir: string, runs: number): Promise<StorageFigures> {
  const r = (await (await load('storage'))(calls, { dir, runs })) as Record<string, unknown>;
  return { calls, bytesPerCall: num('storageBench', 'bytesPerCall', r.bytesPerCall), perTable: r.perTable };
}

export async function queriesPhase(calls: number, dir: string, runs: number): Promise<QueryFigures> {
  const r = (await (await load('queries'))(calls, { dir, runs })) as Record<string, unknown>;
  if (!Array.isArray(r.rows) || r.rows.length === 0) throw new Error('queryBench returned no rows');
  const rows = (r.rows as Record<string, unknown>[]).map((x): QueryRow => ({
    question: String(x.question),
    publicMs: num('queryBench', 'publicMs', x.publicMs),
    leanMs: num('queryBench', 'leanMs', x.leanMs),
    ratio: num('queryBench', 'ratio', x.ratio),
    target: num('queryBench', 'target', x.target),
  }));
  // queryBench times each command as a process: { wallMs, cpuMs }; the target is on wall time.
  const wall = (x: unknown): unknown => (x && typeof x === 'object' ? (x as { wallMs?: unknown }).wallMs : undefined);
  return { calls, rows, reconcileMs: num('queryBench', 'reconcile.wallMs', wall(r.reconcile)), exportMs: num('queryBench', 'export.wallMs', wall(r.export)) };
}
