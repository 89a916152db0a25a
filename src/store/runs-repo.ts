import { hostname } from 'node:os';
import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import { appLockKey, heldAdvisoryLocks } from './app-lock.js';
import { MAX_IDS } from './compiled-statements.js';
import { destinationOf } from './destinations/index.js';
import type { Database, LeasesTable, NewRejectedRow, SyncRunsTable, SyncStateTable } from './schema.js';
import { pidAlive } from './process-alive.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Records the run as 'running' by this process (its pid and host tell readers whether it still is). */
export async function startRun(db: Db, row: { run_id: string; app_id: string; region: string; mode: string; started_at: number }): Promise<number> {
  const r = await db
    .insertInto('sync_runs')
    .values({ ...row, status: 'running', pid: process.pid, host: hostname() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

export async function updateRun(db: Db, id: number, patch: Updateable<SyncRunsTable>): Promise<void> {
  await db.updateTable('sync_runs').set(patch).where('id', '=', id).execute();
}

export async function getSyncState(db: Db, appId: string, region: string): Promise<SyncStateTable | undefined> {
  return db.selectFrom('sync_state').selectAll().where('app_id', '=', appId).where('region', '=', region).executeTakeFirst();
}

export async function saveSyncState(db: Db, row: SyncStateTable): Promise<void> {
  await db
    .insertInto('sync_state')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['app_id', 'region']).doUpdateSet({
        watermark_started_at: row.watermark_started_at,
        last_success_at: row.last_success_at,
        last_full_sync_at: row.last_full_sync_at,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

/** Stores rejected records, skipping any whose identical payload is already filed for that key and region. */
export async function insertRejected(db: Db, rows: readonly NewRejectedRow[]): Promise<number> {
  let inserted = 0;
  for (const row of rows) {
    const exists = await db
      .selectFrom('rejected_records')
      .select(['id', 'unlisted_at'])
      .where('app_id', '=', row.app_id)
      .where('record_key', '=', row.record_key)
      .where('fingerprint', '=', row.fingerprint)
      .where('region', '=', row.region)
      .executeTakeFirst();
    // Listed again after a complete listing no longer showed it: it counts as held again.
    if (exists?.unlisted_at != null) await db.updateTable('rejected_records').set({ unlisted_at: null }).where('id', '=', exists.id).execute();
    if (exists) continue;
    await db.insertInto('rejected_records').values(row).execute();
    inserted++;
  }
  return inserted;
}

/** A rejected record as markRejectsUnlisted judges it. */
export interface RejectedKey {
  record_key: string;
  fingerprint: string;
}

/**
 * After a full listing proved complete: the app's rejected list entries and unreadable Get Call
 * answers (filed for this region) that the listing no longer showed get `unlisted_at`, and no longer
 * count as calls the service holds (countRejectedListedOnly); the records stay. Counted for good, one
 * such entry left the incremental proof's count one above the service, and a call indexed late
 * beyond the window was missing, ok, after every full listing (helper-65 F3, session 30). Returns how
 * many were marked.
 */
export async function markRejectsUnlisted(db: Db, appId: string, region: string, stillListed: (r: RejectedKey) => boolean, now: number): Promise<number> {
  const rows = await db
    .selectFrom('rejected_records')
    .select(['id', 'record_key', 'fingerprint'])
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('endpoint', 'in', ['list_calls', 'get_call'])
    .where('unlisted_at', 'is', null)
    .execute();
  const gone = rows.filter((r) => !stillListed(r)).map((r) => r.id);
  for (let i = 0; i < gone.length; i += MAX_IDS) {
    await db.updateTable('rejected_records').set({ unlisted_at: now }).where('id', 'in', gone.slice(i, i + MAX_IDS)).execute();
  }
  return gone.length;
}

/** Marks runs left 'running' by a process that died; call only while holding the sync lease (SQLite) or these apps' locks (PostgreSQL). */
export async function abandonStaleRuns(db: Db, apps: readonly { appId: string; region: string }[], nowSec: number): Promise<number> {
  if (apps.length === 0) return 0;
  // By app AND region: the lock (PostgreSQL) is one app's in one region, and the same appId's other
  // region may be syncing now in another process (probe67 F3).
  const r = await db
    .updateTable('sync_runs')
    .set({ status: 'abandoned', ended_at: nowSec, error: 'the process running it stopped without finishing (killed or crashed); a later run resumed' })
    .where('status', '=', 'running')
    .where((eb) => eb.or(apps.map((a) => eb.and([eb('app_id', '=', a.appId), eb('region', '=', a.region)]))))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function listRecentRuns(db: Db, limit: number, appId?: string): Promise<Selectable<SyncRunsTable>[]> {
  let q = db.selectFrom('sync_runs').selectAll().orderBy('id', 'desc').limit(limit);
  if (appId) q = q.where('app_id', '=', appId);
  return withLiveness(db, await q.execute());
}

type RunRow = Pick<Selectable<SyncRunsTable>, 'app_id' | 'region' | 'status' | 'error' | 'pid' | 'host'>;

/** Who ran a run, for messages; and why it stopped when its process, on this host, is gone. */
function runner(run: RunRow, host: string): { who: string; gone?: string } {
  const who = run.pid !== null && run.host !== null ? `pid ${run.pid} on ${run.host}` : 'its process';
  if (run.host === host && run.pid !== null && !pidAlive(run.pid)) return { who, gone: `the process running it (${who}) is gone (killed or crashed); the next sync resumes` };
  return { who };
}

/**
 * Why a run recorded as 'running' has no process behind it, or undefined while it may still run
 * (SQLite). A run of this host is judged by its pid; any run also by the database's 'sync' lease,
 * which its process renews while it works: a lease of that process past its expiry, or, for a run of
 * another host, no live lease at all, means it stopped. A run of this host without any lease
 * (`callsync demo` takes none) is judged by its pid alone.
 */
export function abandonedReason(run: RunRow, leases: readonly LeasesTable[], nowMs: number, host = hostname()): string | undefined {
  if (run.status !== 'running') return undefined;
  const { who, gone } = runner(run, host);
  if (gone) return gone;
  const covering = leases.filter((l) => l.name === 'sync');
  const own = run.pid === null ? covering : covering.filter((l) => l.pid === run.pid && l.host === run.host);
  if (own.some((l) => l.expires_at > nowMs)) return undefined;
  if (own.length > 0) return `its lease expired at ${new Date(Math.max(...own.map((l) => l.expires_at))).toISOString()}: the process running it (${who}) stopped renewing it; the next sync resumes`;
  if (run.host === host && run.pid !== null) return undefined;
  return `no live lease covers it: the process running it (${who}) stopped; the next sync resumes`;
}

/** Like abandonedReason, on PostgreSQL: a running run is alive while its app's lock is held (and its process, on this host, exists). */
export function lockedRunReason(run: RunRow, lockHeld: boolean, host = hostname()): string | undefined {
  if (run.status !== 'running') return undefined;
  const { who, gone } = runner(run, host);
  if (gone) return gone;
  if (lockHeld) return undefined;
  return `no session holds its app's lock: the process running it (${who}) stopped; the next sync resumes`;
}

/** Runs as readers should show them: a 'running' run whose process is gone is 'abandoned', with the reason. */
export async function withLiveness<R extends RunRow>(db: Db, runs: R[], nowMs = Date.now()): Promise<R[]> {
  if (!runs.some((r) => r.status === 'running')) return runs;
  let why: (r: R) => string | undefined;
  if (destinationOf(db).capabilities.concurrentWriters) {
    // PostgreSQL: a run is alive while some session holds its app's advisory lock (store/app-lock.ts).
    const held = await heldAdvisoryLocks(db, runs.filter((r) => r.status === 'running').map((r) => appLockKey(r.app_id, r.region)));
    why = (r) => lockedRunReason(r, held.has(appLockKey(r.app_id, r.region)));
  } else {
    const leases = await db.selectFrom('leases').selectAll().execute();
    why = (r) => abandonedReason(r, leases, nowMs);
  }
  return runs.map((r) => {
    const reason = why(r);
    return reason === undefined ? r : { ...r, status: 'abandoned', error: r.error ?? reason };
  });
}

export interface AppStatus {
  app_id: string;
  region: string;
  watermark_started_at: number | null;
  last_success_at: number | null;
  calls: number;
  rejected: number;
  last_run_status: string | null;
  last_run_error: string | null;
  last_run_started_at: number | null;
}

/**
 * The last run of each app and region (the newest by id, backfills aside unless it ran nothing else), as readers should show it (see withLiveness).
 * `nowMs` judges the leases: a use case passes its clock's reading; a reader command may leave the wall clock.
 */
export async function lastRuns(db: Db, nowMs = Date.now()): Promise<Selectable<SyncRunsTable>[]> {
  // Not backfills: `--since/--until` reads one window, so one that ends ok proves nothing about the
  // rest; taken as the last run, it made status healthy and cleared the export's stale mark after a
  // failed sync (probe round 16 a, F3). `callsync runs` lists them.
  // An app that only ever ran backfills is judged by its last one: with none taken as its last run,
  // a failed or killed backfill on a new database read as healthy (probe round 17 a, 6).
  const newest = (backfills: boolean) => {
    const q = db.selectFrom('sync_runs').select(['app_id', 'region', (eb) => eb.fn.max('id').as('id')]).groupBy(['app_id', 'region']);
    return backfills ? q : q.where('mode', '!=', 'backfill');
  };
  const byApp = new Map<string, number>();
  for (const r of [...(await newest(true).execute()), ...(await newest(false).execute())]) byApp.set(JSON.stringify([r.app_id, r.region]), Number(r.id));
  const ids = [...byApp.values()];
  const rows = ids.length ? await db.selectFrom('sync_runs').selectAll().where('id', 'in', ids).execute() : [];
  return withLiveness(db, rows, nowMs);
}

/** Per app and region found in the database: state, counts and the last finished (or running) run. */
export async function appStatuses(db: Db): Promise<AppStatus[]> {
  const keys = await db
    .selectFrom('sync_runs')
    .select(['app_id', 'region'])
    .union(db.selectFrom('sync_state').select(['app_id', 'region']))
    .execute();
  const last = await lastRuns(db);
  const out: AppStatus[] = [];
  for (const { app_id, region } of keys) {
    const state = await getSyncState(db, app_id, region);
    const calls = await db.selectFrom('calls').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', app_id).where('region', '=', region).executeTakeFirstOrThrow();
    const rejected = await db.selectFrom('rejected_records').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', app_id).executeTakeFirstOrThrow();
    const run = last.find((r) => r.app_id === app_id && r.region === region);
    out.push({
      app_id, region,
      watermark_started_at: state?.watermark_started_at ?? null,
      last_success_at: state?.last_success_at ?? null,
      calls: Number(calls.n),
      rejected: Number(rejected.n),
      last_run_status: run?.status ?? null,
      last_run_error: run?.error ?? null,
      last_run_started_at: run?.started_at ?? null,
    });
  }
  return out.sort((a, b) => (a.app_id + a.region).localeCompare(b.app_id + b.region));
}
