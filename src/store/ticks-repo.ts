import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Whether the app was already synced for this tick (by any worker). */
export async function tickDone(db: Kysely<Database>, appId: string, region: string, tickKey: string): Promise<boolean> {
  const row = await db.selectFrom('app_ticks').select('status').where('app_id', '=', appId).where('region', '=', region).where('tick_key', '=', tickKey).executeTakeFirst();
  return row !== undefined;
}

/** Records that the app was synced for this tick; the first record wins. */
export async function markTickDone(db: Kysely<Database>, row: { app_id: string; region: string; tick_key: string; run_id: string; status: string; completed_at: number }): Promise<void> {
  await db.insertInto('app_ticks').values(row).onConflict((oc) => oc.columns(['app_id', 'region', 'tick_key']).doNothing()).execute();
}
