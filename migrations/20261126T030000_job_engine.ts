import type { Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';
import { up as createLeases } from './20261122T020000_leases.js';
import { up as createAppTicks } from './20261122T030000_app_ticks.js';

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

/** Back to the home-made coordination: the two tables again, empty (what they held belonged to running processes). */
export async function down(db: Db, d: DialectSql): Promise<void> {
  await createAppTicks(db);
  if (d.sharedWriters) await createLeases(db);
}
