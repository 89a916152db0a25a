import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * Indexes no query of callsync reads (EXPLAIN QUERY PLAN of every query in src/ and of the views):
 * a started_at range, with or without an app, is served by `calls_started` (one app per database is
 * the common case, and an app filter on top of it reads no other pages), and `group_call_attendance`
 * scans `calls` for `receiver_type = 'group'`, which `calls_group_receiver` (app_id first) cannot
 * serve. Together ~87 bytes per call (issue 16: bytes per call).
 */
const DROPPED_INDEXES = ['calls_app_started', 'calls_group_receiver'];

/**
 * The time indexes, now in descending order. The service lists calls newest first, so a full sync
 * (and a backfill), which writes most of a database, inserts them in descending time: into an
 * ascending index each insert lands at its left edge, and every page split there leaves two half
 * pages behind (~48 % of these indexes was free space after a 200,000-call sync). Descending, the
 * same inserts append at the right edge and fill each page. Range filters and ORDER BY either way
 * use a descending index as well as an ascending one.
 */
const DESCENDING_INDEXES: [string, string][] = [
  ['calls_started', 'started_at'],
  ['calls_started_day', 'started_day'],
  ['calls_started_month', 'started_month'],
];

async function createDescendingIndexes(db: Db): Promise<void> {
  for (const [name, col] of DESCENDING_INDEXES) {
    await sql.raw(`drop index if exists "${name}"`).execute(db);
    await sql.raw(`create index "${name}" on "calls" ("${col}" desc)`).execute(db);
  }
}

/** The tables whose foreign keys cascade from `calls`: dropping `calls` empties them, so they are copied aside. */
const CHILDREN = ['call_participants', 'call_recordings', 'call_transcriptions'];

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
}

/**
 * SQLite: `calls` gets `call_id INTEGER PRIMARY KEY`, an alias of its rowid (which VACUUM may
 * renumber while no column names it): the rebuild keeps every rowid as the call's call_id, so the
 * file's order is unchanged. The key (app_id, session_id) stays unique (the sync upserts by it, the
 * child tables reference it). As in 20261123T010000_call_details: inside the migrator's transaction
 * foreign keys cannot be switched off and dropping `calls` cascades, so the children and the
 * payloads are copied aside first and put back; the column list and the indexes are read from the
 * table itself.
 */
async function rebuildCallsSqlite(db: Db): Promise<void> {
  // A database migrated down from this one still has call_id (its rowid alias): made again below.
  const cols = (await sql<ColumnInfo>`pragma table_info(calls)`.execute(db)).rows.filter((c) => c.name !== 'call_id');
  const indexes = (await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'index' and tbl_name = 'calls' and sql is not null`.execute(db)).rows;
  const defs = cols.map((c) => `"${c.name}" ${c.type}${c.notnull === 1 ? ' not null' : ''}${c.dflt_value !== null ? ` default ${c.dflt_value}` : ''}`);
  const names = cols.map((c) => `"${c.name}"`).join(', ');
  await sql.raw(`create temp table calls_20261126 as select rowid as call_id, ${names} from calls`).execute(db);
  await sql`create temp table payloads_20261126 as select c.rowid as call_id, p.raw_json from call_payloads p join calls c on c.app_id = p.app_id and c.session_id = p.session_id`.execute(db);
  for (const t of CHILDREN) await sql.raw(`create temp table ${t}_20261126 as select * from ${t}`).execute(db);
  await sql`drop table call_payloads`.execute(db);
  await sql`drop table calls`.execute(db);
  // call_id last: `select *` and `c.*` keep the column order users have, with the new column at the end.
  // The key's unique index leads with session_id (SQLite matches upsert targets and foreign keys to it
  // in any column order). Led by app_id, it was the only index SQLite could walk for a GROUP BY app_id
  // over all calls (reconcile's summary) once calls_app_started is gone, and walking it reads the
  // table in session id order, one random page per call: 3× the time of a plain scan at 200,000
  // calls. It also finds a call by its session id alone, which ad hoc users do.
  await sql.raw(`create table calls (${defs.join(', ')}, "call_id" integer primary key, constraint "calls_key" unique ("session_id", "app_id"))`).execute(db);
  await sql.raw(`insert into calls (call_id, ${names}) select call_id, ${names} from temp.calls_20261126 order by call_id`).execute(db);
  const remade = [...DROPPED_INDEXES, ...DESCENDING_INDEXES.map(([name]) => name)];
  for (const i of indexes) if (!remade.includes(i.name)) await sql.raw(i.sql).execute(db);
  await createPayloadTable(db, 'integer');
  await sql`insert into call_payload_rows (call_id, raw_json) select call_id, raw_json from temp.payloads_20261126 order by call_id`.execute(db);
  for (const t of CHILDREN) await sql.raw(`insert into ${t} select * from temp.${t}_20261126`).execute(db);
  for (const t of ['calls', 'payloads', ...CHILDREN]) await sql.raw(`drop table temp.${t}_20261126`).execute(db);
  const broken = (await sql`pragma foreign_key_check`.execute(db)).rows;
  if (broken.length > 0) throw new Error(`rebuilding calls broke ${broken.length} foreign key reference(s)`);
}

/** The payload table, keyed by the call's integer id: no text key stored twice, no index of its own. */
async function createPayloadTable(db: Db, idType: 'integer' | 'bigint'): Promise<void> {
  await db.schema
    .createTable('call_payload_rows')
    .addColumn('call_id', idType, (c) => c.primaryKey().references('calls.call_id').onDelete('cascade'))
    .addColumn('raw_json', 'text', (c) => c.notNull())
    .execute();
}

/**
 * PostgreSQL: the same shape with its own types. `call_id` is a bigserial (existing rows numbered as
 * they are stored), unique; the primary key stays (app_id, session_id).
 */
async function addCallIdPostgres(db: Db): Promise<void> {
  await sql`alter table calls add column call_id bigserial not null`.execute(db);
  await sql`alter table calls add constraint calls_call_id_key unique (call_id)`.execute(db);
  await createPayloadTable(db, 'bigint');
  await sql`insert into call_payload_rows (call_id, raw_json) select c.call_id, p.raw_json from call_payloads p join calls c on c.app_id = p.app_id and c.session_id = p.session_id`.execute(db);
  await sql`drop table call_payloads`.execute(db);
  for (const name of DROPPED_INDEXES) await db.schema.dropIndex(name).ifExists().execute();
}

/**
 * Issue 16 (≤ 2,500 bytes per call): the raw payload (~1.4 KB of the ~2.7 KB a call took) was keyed
 * by the call's text key (app_id, session_id), stored in each payload row and again in an index of
 * its own (~115 bytes per call together). It is now `call_payload_rows (call_id, raw_json)`, keyed by
 * a new integer `calls.call_id`: on SQLite the rowid itself, so the rows are stored in call order and
 * no index is needed. `call_payloads` (app_id, session_id, raw_json), the documented table, becomes
 * a view of the same name and columns joining `calls`, so ad hoc SQL written for it runs unchanged;
 * `calls_with_payload` reads the new table. The payload stays plain JSON text: any sqlite3 or psql
 * reads it (SQLite's JSONB needs 3.45+, which common system sqlite3 builds are not).
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  await sql`drop view if exists calls_with_payload`.execute(db);
  if (d.idType === 'integer') await rebuildCallsSqlite(db);
  else await addCallIdPostgres(db);
  await createDescendingIndexes(db);
  await createViews(db);
}

async function createViews(db: Db): Promise<void> {
  await sql`create view call_payloads as
select c.app_id, c.session_id, p.raw_json
from calls c
join call_payload_rows p on p.call_id = c.call_id`.execute(db);
  await sql`create view calls_with_payload as
select c.*, p.raw_json
from calls c
left join call_payload_rows p on p.call_id = c.call_id`.execute(db);
}

/**
 * Back to 20261123T040000: `call_payloads` a table keyed by (app_id, session_id), the two indexes
 * back. `calls.call_id` stays (SQLite would need the rebuild again to drop a primary key column;
 * PostgreSQL drops it): nothing of the older schema reads it.
 */
export async function down(db: Db, d: DialectSql): Promise<void> {
  await sql`drop view if exists calls_with_payload`.execute(db);
  await sql`drop view if exists call_payloads`.execute(db);
  await db.schema
    .createTable('call_payloads')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('raw_json', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('call_payloads_pk', ['app_id', 'session_id'])
    .addForeignKeyConstraint('call_payloads_call_fk', ['app_id', 'session_id'], 'calls', ['app_id', 'session_id'], (fk) => fk.onDelete('cascade'))
    .execute();
  await sql`insert into call_payloads (app_id, session_id, raw_json) select c.app_id, c.session_id, p.raw_json from call_payload_rows p join calls c on c.call_id = p.call_id`.execute(db);
  await db.schema.dropTable('call_payload_rows').execute();
  if (d.idType === 'bigserial') {
    await sql`alter table calls drop column call_id`.execute(db);
  }
  for (const [name, col] of DESCENDING_INDEXES) {
    await sql.raw(`drop index if exists "${name}"`).execute(db);
    await db.schema.createIndex(name).on('calls').column(col).execute();
  }
  await db.schema.createIndex('calls_app_started').on('calls').columns(['app_id', 'started_at']).execute();
  await db.schema.createIndex('calls_group_receiver').on('calls').columns(['app_id', 'receiver_type', 'receiver']).execute();
  await sql`create view calls_with_payload as
select c.*, p.raw_json
from calls c
left join call_payloads p on p.app_id = c.app_id and p.session_id = c.session_id`.execute(db);
}
