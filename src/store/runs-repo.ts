import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database, NewRejectedRow, SyncRunsTable, SyncStateTable } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function startRun(db: Db, row: { run_id: string; app_id: string; region: string; mode: string; started_at: number }): Promise<number> {
  const r = await db
    .insertInto('sync_runs')
    .values({ ...row, status: 'running' })
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

/** Stores rejected records, skipping any whose identical payload is already filed for that key. */
export async function insertRejected(db: Db, rows: readonly NewRejectedRow[]): Promise<number> {
  let inserted = 0;
  for (const row of rows) {
    const exists = await db
      .selectFrom('rejected_records')
      .select('id')
      .where('app_id', '=', row.app_id)
      .where('record_key', '=', row.record_key)
      .where('fingerprint', '=', row.fingerprint)
      .executeTakeFirst();
    if (exists) continue;
    await db.insertInto('rejected_records').values(row).execute();
    inserted++;
  }
  return inserted;
}

/** Marks runs left 'running' by a process that died; call only while holding the sync lease. */
export async function abandonStaleRuns(db: Db, appIds: readonly string[], nowSec: number): Promise<number> {
  if (appIds.length === 0) return 0;
  const r = await db
    .updateTable('sync_runs')
    .set({ status: 'abandoned', ended_at: nowSec, error: 'the process running it stopped without finishing (killed or crashed); a later run resumed' })
    .where('status', '=', 'running')
    .where('app_id', 'in', [...appIds])
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function listRecentRuns(db: Db, limit: number, appId?: string): Promise<Selectable<SyncRunsTable>[]> {
  let q = db.selectFrom('sync_runs').selectAll().orderBy('id', 'desc').limit(limit);
  if (appId) q = q.where('app_id', '=', appId);
  return q.execute();
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

/** Per app and region found in the database: state, counts and the last finished (or running) run. */
export async function appStatuses(db: Db): Promise<AppStatus[]> {
  const keys = await db
    .selectFrom('sync_runs')
    .select(['app_id', 'region'])
    .union(db.selectFrom('sync_state').select(['app_id', 'region']))
    .execute();
  const out: AppStatus[] = [];
  for (const { app_id, region } of keys) {
    const state = await getSyncState(db, app_id, region);
    const calls = await db.selectFrom('calls').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', app_id).where('region', '=', region).executeTakeFirstOrThrow();
    const rejected = await db.selectFrom('rejected_records').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', app_id).executeTakeFirstOrThrow();
    const last = await db.selectFrom('sync_runs').select(['status', 'error', 'started_at']).where('app_id', '=', app_id).where('region', '=', region).orderBy('id', 'desc').limit(1).executeTakeFirst();
    out.push({
      app_id, region,
      watermark_started_at: state?.watermark_started_at ?? null,
      last_success_at: state?.last_success_at ?? null,
      calls: Number(calls.n),
      rejected: Number(rejected.n),
      last_run_status: last?.status ?? null,
      last_run_error: last?.error ?? null,
      last_run_started_at: last?.started_at ?? null,
    });
  }
  return out.sort((a, b) => (a.app_id + a.region).localeCompare(b.app_id + b.region));
}
