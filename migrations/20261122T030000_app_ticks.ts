import type { Kysely } from 'kysely';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** Which apps a tick (a schedule slot or a --tick-key) has already synced: several workers on one
 * database then sync each app once per tick. */
export async function up(db: Db): Promise<void> {
  await db.schema
    .createTable('app_ticks')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('tick_key', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('app_ticks_pk', ['app_id', 'region', 'tick_key'])
    .execute();
}

export async function down(db: Db): Promise<void> {
  await db.schema.dropTable('app_ticks').ifExists().execute();
}
