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
  await db
    .insertInto('callsync_settings')
    .values({ key: TOLERANCE_SETTING, value: String(minutes) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(minutes) }))
    .execute();
}
