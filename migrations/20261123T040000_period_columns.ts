import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';
import { createViews20261123 } from './views-20261123.js';
import { createViews20261123b } from './views-20261123b.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** The views rebuilt on the period columns (group_call_attendance reads none of them and stays). */
const VIEWS = ['user_usage', 'daily_usage', 'call_reconciliation'];

/**
 * Indexes on the period columns: a month or a day filter on `calls` or the views is one range of
 * one of them. Narrow on purpose: with the raw payload off the row (20261123T030000) a month's rows
 * are cheap to read, and a covering index of the 15 columns the views sum cost 169 bytes per call
 * (6 % of the file) to keep `daily_usage` at 0.4× a lean layout instead of 1.0× (bench/queries.ts,
 * 50,000 calls; the target is ≤ 2×).
 */
const INDEXES: [string, string[]][] = [
  ['calls_started_month', ['started_month']],
  ['calls_started_day', ['started_day']],
];

/**
 * Issue 16: the UTC day ('YYYY-MM-DD') and month ('YYYY-MM') a call started in, stored on `calls`
 * (written by the transform from started_at, filled here for the calls stored before). Ad hoc users
 * filter the reporting views by day and month every day; a period the views computed from
 * started_at could not be served by any index, so each such filter read every call.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  for (const v of VIEWS) await sql.raw(`drop view if exists ${v}`).execute(db);
  await db.schema.alterTable('calls').addColumn('started_day', 'text').execute();
  await db.schema.alterTable('calls').addColumn('started_month', 'text').execute();
  await sql
    .raw(`update calls set started_day = ${d.day('started_at')}, started_month = ${d.month('started_at')} where started_at is not null`)
    .execute(db);
  for (const [name, columns] of INDEXES) await db.schema.createIndex(name).on('calls').columns(columns).execute();
  await createViews20261123b(db, d);
  await recreateCallsWithPayload(db);
}

/**
 * `calls_with_payload` (20261123T030000) is `select c.*, …`: PostgreSQL expands the `*` when the view
 * is created, so it must be made again to show columns added since (SQLite expands it at each query).
 * Down drops it before dropping the columns, which PostgreSQL would refuse while the view uses them.
 */
async function recreateCallsWithPayload(db: Db): Promise<void> {
  await sql`drop view if exists calls_with_payload`.execute(db);
  await sql`create view calls_with_payload as
select c.*, p.raw_json
from calls c
left join call_payloads p on p.app_id = c.app_id and p.session_id = c.session_id`.execute(db);
}

export async function down(db: Db, d: DialectSql): Promise<void> {
  for (const v of VIEWS) await sql.raw(`drop view if exists ${v}`).execute(db);
  for (const [name] of INDEXES) await db.schema.dropIndex(name).ifExists().execute();
  await sql`drop view if exists calls_with_payload`.execute(db);
  await db.schema.alterTable('calls').dropColumn('started_month').execute();
  await db.schema.alterTable('calls').dropColumn('started_day').execute();
  await recreateCallsWithPayload(db);
  // The definitions of 20261123T010000_call_details, whose views these replaced.
  await dropAndRecreateEarlier(db, d);
}

async function dropAndRecreateEarlier(db: Db, d: DialectSql): Promise<void> {
  // createViews20261123 creates all four views: group_call_attendance, untouched by up, goes first.
  await sql`drop view if exists group_call_attendance`.execute(db);
  await createViews20261123(db, d);
}
