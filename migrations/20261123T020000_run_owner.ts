import type { Kysely } from 'kysely';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * Issue 14: who runs a run. A process killed with SIGKILL leaves its run 'running'; with the pid and
 * host of the process recorded, `status` and `runs` can tell at once that the process is gone
 * instead of reporting a healthy sync until the next one starts. Null for runs recorded before.
 */
export async function up(db: Db): Promise<void> {
  await db.schema.alterTable('sync_runs').addColumn('pid', 'bigint').execute();
  await db.schema.alterTable('sync_runs').addColumn('host', 'text').execute();
}

export async function down(db: Db): Promise<void> {
  await db.schema.alterTable('sync_runs').dropColumn('host').execute();
  await db.schema.alterTable('sync_runs').dropColumn('pid').execute();
}
