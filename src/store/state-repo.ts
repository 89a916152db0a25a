import type { Kysely, Selectable } from 'kysely';
import type { Database, SyncRunsTable, SyncStateTable } from './schema.js';

/** What `callsync state show` prints for one app and region. */
export interface AppStateReport {
  readonly app_id: string;
  readonly region: string;
  /** undefined: no sync_state row (never completed a listing). */
  readonly state: SyncStateTable | undefined;
  readonly runs: Selectable<SyncRunsTable>[];
  readonly retries: { session_id: string; reason: string; attempts: number; first_at: number; last_at: number }[];
  /** How many calls the retry list holds (the list above is cut at `retryLimit`). */
  readonly retryCount: number;
}

/** App and region pairs the database knows (a run or a state row). */
export async function storedApps(db: Kysely<Database>): Promise<{ app_id: string; region: string }[]> {
  const rows = await db.selectFrom('sync_runs').select(['app_id', 'region']).union(db.selectFrom('sync_state').select(['app_id', 'region'])).execute();
  return rows.sort((a, b) => (a.app_id + a.region).localeCompare(b.app_id + b.region));
}

export async function appState(db: Kysely<Database>, appId: string, region: string, opts: { runLimit: number; retryLimit: number }): Promise<AppStateReport> {
  const state = await db.selectFrom('sync_state').selectAll().where('app_id', '=', appId).where('region', '=', region).executeTakeFirst();
  const runs = await db.selectFrom('sync_runs').selectAll().where('app_id', '=', appId).where('region', '=', region).orderBy('id', 'desc').limit(opts.runLimit).execute();
  const retries = await db
    .selectFrom('detail_retries')
    .select(['session_id', 'reason', 'attempts', 'first_at', 'last_at'])
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .orderBy('first_at')
    .orderBy('session_id')
    .limit(opts.retryLimit)
    .execute();
  const count = await db.selectFrom('detail_retries').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', appId).where('region', '=', region).executeTakeFirstOrThrow();
  // pg parses int8 as numbers (store/postgres.ts), so both dialects give the same shapes.
  return { app_id: appId, region, state, runs, retries, retryCount: Number(count.n) };
}

/**
 * Forgets an app's watermark: its next sync runs in mode full (sync-app.ts chooses full when the
 * stored watermark is null) and recomputes it from what it lists. Calls, the retry list and the
 * last success time are kept. Returns the watermark it cleared, or undefined when none was stored.
 */
export async function resetWatermark(db: Kysely<Database>, appId: string, region: string, nowSec: number): Promise<number | null | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('sync_state').select('watermark_started_at').where('app_id', '=', appId).where('region', '=', region).executeTakeFirst();
    if (!row) return undefined;
    await trx.updateTable('sync_state').set({ watermark_started_at: null, updated_at: nowSec }).where('app_id', '=', appId).where('region', '=', region).execute();
    return row.watermark_started_at;
  });
}
