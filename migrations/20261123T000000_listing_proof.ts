import type { Kysely } from 'kysely';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * What each run's listing proved (issue 11): the order it observed, the distinct calls it listed
 * against the total the service reported, and whether the listing added up.
 */
export async function up(db: Db): Promise<void> {
  await db.schema.alterTable('sync_runs').addColumn('listing_order', 'text').execute();
  await db.schema.alterTable('sync_runs').addColumn('listed_distinct', 'bigint').execute();
  await db.schema.alterTable('sync_runs').addColumn('reported_total', 'bigint').execute();
  await db.schema.alterTable('sync_runs').addColumn('listing_complete', 'bigint').execute();
}

export async function down(db: Db): Promise<void> {
  for (const c of ['listing_complete', 'reported_total', 'listed_distinct', 'listing_order']) {
    await db.schema.alterTable('sync_runs').dropColumn(c).execute();
  }
}
