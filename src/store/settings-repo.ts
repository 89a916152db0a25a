import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** The `callsync_settings` key of the tolerance the reconciliation views apply. */
export const TOLERANCE_SETTING = 'reconcile_tolerance_minutes';

/**
 * Stores the tolerance the views apply (config `reconcileToleranceMinutes`). Every sync writes it so
 * ad hoc SQL over the views (`callsync query`) follows the config; `callsync reconcile` does not
 * rely on it and applies the config's own value (see withTolerance in reconcile/).
 */
export async function saveTolerance(db: Kysely<Database> | Transaction<Database>, minutes: number): Promise<void> {
  await saveSetting(db, TOLERANCE_SETTING, String(minutes));
}

/** The tolerance the views apply when the database stores none (call_reconciliation's coalesce). */
export const VIEW_DEFAULT_TOLERANCE = 0.01;

/** The tolerance the views apply now: the stored one, else their default. */
export async function storedTolerance(db: Kysely<Database> | Transaction<Database>): Promise<number> {
  return Number((await getSetting(db, TOLERANCE_SETTING)) ?? VIEW_DEFAULT_TOLERANCE);
}

/** A `callsync_settings` value, or undefined when the key is not set. */
export async function getSetting(db: Kysely<Database> | Transaction<Database>, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('callsync_settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value ?? undefined;
}

export async function saveSetting(db: Kysely<Database> | Transaction<Database>, key: string, value: string): Promise<void> {
  await db
    .insertInto('callsync_settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
