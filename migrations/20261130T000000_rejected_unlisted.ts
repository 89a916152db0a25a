import type { Kysely } from 'kysely';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * When a full listing proved complete last no longer showed a rejected list entry (unix seconds;
 * null while it is listed). The incremental proof counts rejected entries as calls the service
 * holds; counted for good, one the service stopped listing left the count one above the service,
 * and a call indexed late beyond the window was missing, ok, after every full listing (session 30,
 * helper-65 F3). The record itself is kept: it is what the service sent.
 */
export async function up(db: Db): Promise<void> {
  await db.schema.alterTable('rejected_records').addColumn('unlisted_at', 'bigint').execute();
}

export async function down(db: Db): Promise<void> {
  await db.schema.alterTable('rejected_records').dropColumn('unlisted_at').execute();
}
