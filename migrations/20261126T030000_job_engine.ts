import type { Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * Workers on PostgreSQL now share the apps through a job engine (pg-boss, in its own schema) and
 * per-app advisory locks: the home-made tick table goes everywhere (SQLite never used it), and the
 * lease table on PostgreSQL (SQLite keeps its one-process lease). Nothing in them outlives a run:
 * a lease belongs to a live process, a tick record to a finished night.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  await db.schema.dropTable('app_ticks').ifExists().execute();
  if (d.sharedWriters) await db.schema.dropTable('leases').ifExists().execute();
}
