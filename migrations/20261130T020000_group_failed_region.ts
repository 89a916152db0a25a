import type { Kysely } from 'kysely';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * The region whose run could not sync a group's members (synced_groups status 'failed'): only that
 * region's next run reads it again. Read by the app's next run in any region, one appId in two
 * regions had the other region's host answer ERR_GUID_NOT_FOUND for it: the group was marked not
 * found, its members removed, and the region holding it never read it again, ok (probe66).
 * Null for a group marked before: any region of the app reads it again, as before.
 */
export async function up(db: Db): Promise<void> {
  await db.schema.alterTable('synced_groups').addColumn('failed_region', 'text').execute();
}

export async function down(db: Db): Promise<void> {
  await db.schema.alterTable('synced_groups').dropColumn('failed_region').execute();
}
