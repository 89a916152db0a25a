/**
 * Issue 16: the finance questions ad hoc users ask, timed over the public schema and over a lean
 * reference layout (only the columns each question needs, indexed) built in the same database in the
 * same run, so every figure is a ratio of two timings taken minutes apart on the same machine.
 * Also times `callsync reconcile` + `callsync export billing` (the built CLI, each a process).
 *
 * The database is generated, not synced: the simulator's calls (AppDataset, as Get Call serves them)
 * go through the real transform (parseCall, apiCallToRows) and the real store (upsertCalls) in
 * transactions of 1,000 calls. What is stored is what a sync stores from complete details, at some
 * 20× the speed of a 1M-call sync through the simulator's HTTP (which is measured elsewhere).
 *
 * Run alone: `npx tsx bench/queries.ts [calls]` (default 200,000; needs `npm run build` for the CLI
 * figure). bench/run.ts calls `queryBench`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import { computeBilling } from '../src/export/billing.js';
import { resolvePeriod } from '../src/export/period.js';
import { AppDataset } from '../src/simulator/dataset.js';
import { upsertCalls } from '../src/store/calls-repo.js';
import { openStore } from '../src/store/connection.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { saveSyncState, startRun, updateRun } from '../src/store/runs-repo.js';
import type { Database } from '../src/store/schema.js';
import { datasetRowBatches } from './dataset-rows.js';
import { BIN_PATH, CALLSYNC_BIN } from './lib.js';

/** The simulator's default "now" (2025-12-01): its calls span the months before it. */
const NOW = 1_764_547_200;
const APP = 'bench-app';
const REGION = 'us';
/** The month every monthly question asks about (a full month inside the generated span). */
export const BENCH_MONTH = '2025-10';
const BATCH = 1000;

/** One question: CPU milliseconds of the query on the public schema and on the lean layout. */
export interface QueryRow {
  question: string;
  publicMs: number;
  leanMs: number;
  ratio: number;
  target: 2;
}

export interface QueryBenchResult {
  calls: number;
  database: string;
  buildMs: number;
  rows: QueryRow[];
  /**
   * `callsync reconcile --format json` and `callsync export billing` over the whole span (every call),
   * each a process: wall time (the target, ≤ 3 s together at 1M) and CPU time (steadier on a
   * shared machine).
   */
  reconcile: { wallMs: number; cpuMs: number };
  export: { wallMs: number; cpuMs: number };
}

/** Writes `calls` generated calls through the real transform and store into a fresh SQLite file. */
export async function buildBenchDatabase(path: string, calls: number): Promise<void> {
  rmSync(path, { force: true });
  rmSync(`${path}-wal`, { force: true });
  rmSync(`${path}-shm`, { force: true });
  const store = await openStore(path);
  try {
    await migrateToLatest(store.db);
    const data = new AppDataset(APP, REGION, 16, calls, NOW, 'complete');
    for (const batch of datasetRowBatches(data, calls, BATCH, { appId: APP, region: REGION, now: NOW })) {
      await store.db.transaction().execute((trx) => upsertCalls(trx, batch));
    }
    // One successful sync, so the export does not mark the app stale.
    const id = await startRun(store.db, { run_id: 'bench', app_id: APP, region: REGION, mode: 'full', started_at: NOW });
    await updateRun(store.db, id, { status: 'ok', ended_at: NOW });
    await saveSyncState(store.db, { app_id: APP, region: REGION, watermark_started_at: NOW, last_success_at: NOW, last_full_sync_at: NOW, updated_at: NOW });
    await buildLeanLayout(store.db);
  } finally {
    await store.close();
  }
}

/**
 * The lean reference: a copy of only the columns the questions read, with the period columns
 * indexed, and no raw payload, text ids or other columns in the rows a scan reads.
 */
async function buildLeanLayout(db: Kysely<Database>): Promise<void> {
  await sql`create table lean_calls as
    select started_month as month, started_day as day, started_at, ended_at, app_id, region, type, is_final,
           not_found_at, detail_error, participant_rows, total_participants,
           participant_audio_minutes, participant_video_minutes, participant_total_minutes, participant_max_minutes, participant_negative_rows,
           total_audio_minutes, total_video_minutes, total_duration_minutes, recording_minutes
    from calls`.execute(db);
  await sql`create index lean_calls_month on lean_calls (month)`.execute(db);
  await sql`create index lean_calls_started on lean_calls (started_at)`.execute(db);
  await sql`create table lean_participants as
    select c.started_month as month, p.app_id, p.uid, p.session_id, p.is_joined, p.total_audio_minutes, p.total_video_minutes, p.total_duration_minutes
    from call_participants p join calls c on c.app_id = p.app_id and c.session_id = p.session_id`.execute(db);
  await sql`create index lean_participants_month on lean_participants (month)`.execute(db);
  await sql`analyze`.execute(db);
}

/** The relation and the flag of call_reconciliation, over the lean columns (tolerance 0.01). */
const LEAN_RECONCILED = `
  with b as (
    select *, (ended_at - started_at) / 60.0 as wall, coalesce(total_audio_minutes, 0) as ca, coalesce(total_video_minutes, 0) as cv,
           case when participant_rows > 0 then participant_rows when total_participants > 1 then total_participants else 1 end as entries
    from lean_calls %WHERE%
  )
  select *,
    case
      when is_final = 0 or not_found_at is not null or detail_error is not null or total_audio_minutes is null then 'incomplete'
      when abs(ca - participant_audio_minutes) <= 0.01 and abs(cv - participant_video_minutes) <= 0.01 then 'participant_sum'
      when wall is not null and abs(ca - wall) <= 0.01 and (abs(cv) <= 0.01 or abs(cv - wall) <= 0.01) then 'wall_clock'
      else 'mismatch'
    end as relation,
    case when ca < 0 or cv < 0 or coalesce(total_duration_minutes, 0) < 0 or participant_negative_rows > 0
           or (wall >= 0 and (participant_total_minutes > wall * entries * 1.5 + 10 or coalesce(total_duration_minutes, 0) > wall * entries * 1.5 + 10))
           or wall > 1440 or coalesce(participant_max_minutes, 0) > 1440 or coalesce(total_duration_minutes, 0) > 1440 * entries
         then 1 else 0 end as flagged
  from b`;

const DAILY_SUMS = `count(*) as calls, sum(is_final) as final_calls, sum(participant_rows) as participant_rows,
  sum(participant_audio_minutes) as participant_audio_minutes, sum(participant_video_minutes) as participant_video_minutes,
  sum(participant_total_minutes) as user_minutes, sum(coalesce(total_audio_minutes, 0)) as call_audio_minutes,
  sum(coalesce(total_video_minutes, 0)) as call_video_minutes, sum(coalesce(total_duration_minutes, 0)) as call_total_minutes,
  sum(recording_minutes) as recording_minutes`;

const MONTH_TOTALS = `type, count(*) as calls, sum(participant_total_minutes) as user_minutes,
  sum(coalesce(total_audio_minutes, 0)) as audio_minutes, sum(coalesce(total_video_minutes, 0)) as video_minutes,
  sum(coalesce(total_duration_minutes, 0)) as total_minutes`;

const m = `'${BENCH_MONTH}'`;

/** Each question as a user asks it of the public schema, and the same question of the lean layout. */
const QUESTIONS: { question: string; publicSql: string | 'billing'; leanSql: string }[] = [
  {
    question: 'month totals by type from calls',
    publicSql: `select ${MONTH_TOTALS} from calls where started_month = ${m} group by type`,
    leanSql: `select ${MONTH_TOTALS} from lean_calls where month = ${m} group by type`,
  },
  {
    question: 'minutes per user for a month (user_usage)',
    publicSql: `select * from user_usage where month = ${m}`,
    leanSql: `select app_id, uid, month, count(distinct session_id) as calls,
        count(distinct case when is_joined = 1 then session_id end) as joined_calls, sum(is_joined) as joined_devices,
        sum(coalesce(total_audio_minutes, 0)) as audio_minutes, sum(coalesce(total_video_minutes, 0)) as video_minutes,
        sum(coalesce(total_duration_minutes, 0)) as total_minutes
      from lean_participants where month = ${m} group by app_id, uid, month`,
  },
  {
    question: 'daily_usage for one month',
    publicSql: `select * from daily_usage where month = ${m}`,
    leanSql: `select app_id, region, day, type, ${DAILY_SUMS}, month from lean_calls where month = ${m} group by app_id, region, day, month, type`,
  },
  {
    question: 'call_reconciliation counts by relation (all calls)',
    publicSql: `select relation, count(*) as calls from call_reconciliation group by relation`,
    leanSql: `select relation, count(*) as calls from (${LEAN_RECONCILED.replace('%WHERE%', '')}) x group by relation`,
  },
  {
    question: "a month's billing export (computeBilling)",
    publicSql: 'billing',
    // The same shape as computeBilling's query (grouped by relation and flag too, folded in JS).
    leanSql: `select app_id, region, coalesce(type, '(none)') as type, relation, flagged, count(*) as calls, sum(is_final) as final_calls,
        sum(participant_audio_minutes) as participant_audio_minutes, sum(participant_video_minutes) as participant_video_minutes,
        sum(participant_total_minutes) as user_minutes, sum(coalesce(total_audio_minutes, 0)) as call_audio_minutes,
        sum(coalesce(total_video_minutes, 0)) as call_video_minutes, sum(coalesce(total_duration_minutes, 0)) as call_total_minutes,
        sum(recording_minutes) as recording_minutes
      from (${LEAN_RECONCILED.replace('%WHERE%', 'where started_at >= $START and started_at < $END')}) x
      group by app_id, region, coalesce(type, '(none)'), relation, flagged`,
  },
];

/**
 * Median CPU time (user + system, of this process) of `runs` runs of `fn`, after one untimed run
 * (the page cache warmed for both layouts alike). better-sqlite3 runs a query synchronously in this
 * process, so its CPU time is the query's, and unlike wall time it does not move with what the other
 * processes on a shared machine do (this one drifts 2× within minutes).
 */
async function timeMs(runs: number, fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let k = 0; k < runs; k++) {
    const t = process.cpuUsage();
    await fn();
    const d = process.cpuUsage(t);
    times.push((d.user + d.system) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** Times the five questions on both layouts of a database built by buildBenchDatabase. */
export async function timeQuestions(path: string, runs = 5): Promise<QueryRow[]> {
  const store = await openStore(path, { readonly: true });
  try {
    const period = resolvePeriod({ month: BENCH_MONTH });
    const rows: QueryRow[] = [];
    for (const q of QUESTIONS) {
      const lean = q.leanSql.replace('$START', String(period.start)).replace('$END', String(period.end));
      const publicMs = await timeMs(runs, () => (q.publicSql === 'billing' ? computeBilling(store.db, period) : sql.raw(q.publicSql).execute(store.db)));
      const leanMs = await timeMs(runs, () => sql.raw(lean).execute(store.db));
      rows.push({ question: q.question, publicMs: round(publicMs), leanMs: round(leanMs), ratio: round(publicMs / leanMs), target: 2 });
    }
    return rows;
  } finally {
    await store.close();
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Wall and CPU (user + system, from /usr/bin/time) milliseconds of one CLI process (the bin, on the built dist/). */
function cliMs(args: string[]): { wallMs: number; cpuMs: number } {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', CALLSYNC_BIN, ...args], { encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, PATH: BIN_PATH } });
  const wallMs = performance.now() - t;
  if (r.status !== 0) throw new Error(`callsync ${args[0]} failed (${r.status}): ${r.stderr.slice(-1000)}`);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wallMs: round(wallMs), cpuMs: m ? round((Number(m[1]) + Number(m[2])) * 1000) : NaN };
}

/** Builds a database of `calls` calls, times the questions on both layouts and reconcile + export. */
export async function queryBench(calls: number, opts: { dir?: string; runs?: number } = {}): Promise<QueryBenchResult> {
  const dir = opts.dir ?? join(tmpdir(), `callsync-bench-queries-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const database = join(dir, `queries-${calls}.db`);
  const t = performance.now();
  await buildBenchDatabase(database, calls);
  const buildMs = performance.now() - t;
  const rows = await timeQuestions(database, opts.runs ?? 5);
  const reconcile = cliMs(['reconcile', '--database', database, '--format', 'json']);
  const exported = cliMs(['export', 'billing', '--database', database, '--from', '2025-06-01', '--to', '2025-12-01', '--out', join(dir, 'billing.csv')]);
  return { calls, database, buildMs: round(buildMs), rows, reconcile, export: exported };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\/bench\//, '/bench/'))) {
  const calls = Number(process.argv[2] ?? 200_000);
  const r = await queryBench(calls);
  console.log(`${r.calls} calls (built in ${(r.buildMs / 1000).toFixed(1)} s): ${r.database}`);
  console.table(r.rows);
  const both = (k: 'wallMs' | 'cpuMs'): string => `reconcile ${r.reconcile[k]} + export ${r.export[k]} = ${round(r.reconcile[k] + r.export[k])} ms`;
  console.log(`wall: ${both('wallMs')}; cpu: ${both('cpuMs')}`);
}
