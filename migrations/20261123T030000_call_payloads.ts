import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** The columns of call_participants as of this migration, in table order. */
const PARTICIPANT_COLUMNS = [
  'app_id', 'session_id', 'seq', 'uid', 'device_id', 'total_audio_minutes', 'total_video_minutes',
  'total_duration_minutes', 'is_joined', 'joined_at', 'left_at', 'state',
];

/**
 * SQLite: call_participants becomes a WITHOUT ROWID table, clustered by its key (app_id, session_id,
 * seq): the key is stored once, in the table, instead of in the table and again in the key's own
 * index (with a rowid in both), ~190 bytes per call at 3.7 entries. Rebuilt as in
 * 20261123T010000_call_details: copied aside, dropped, created again under the same name (the views
 * that read it keep their text), filled back. Nothing references call_participants, so nothing
 * cascades. The (app_id, uid) index goes with it: no query of callsync reads it (the views group by
 * uid over every row, the report joins by the key), and under WITHOUT ROWID each of its entries
 * would carry the whole key, twice its size.
 */
async function clusterParticipantsSqlite(db: Db): Promise<void> {
  const cols = PARTICIPANT_COLUMNS.map((c) => `"${c}"`).join(', ');
  await sql`create temp table participants_20261123T03 as select * from call_participants`.execute(db);
  await sql`drop table call_participants`.execute(db);
  await sql`create table call_participants (
    "app_id" text not null, "session_id" text not null, "seq" bigint not null, "uid" text not null, "device_id" text not null,
    "total_audio_minutes" double precision, "total_video_minutes" double precision, "total_duration_minutes" double precision,
    "is_joined" bigint not null, "joined_at" bigint, "left_at" bigint, "state" text,
    constraint "call_participants_pk" primary key ("app_id", "session_id", "seq"),
    constraint "call_participants_call_fk" foreign key ("app_id", "session_id") references "calls" ("app_id", "session_id") on delete cascade
  ) without rowid`.execute(db);
  await sql.raw(`insert into call_participants (${cols}) select ${cols} from temp.participants_20261123T03 order by app_id, session_id, seq`).execute(db);
  await sql`drop table temp.participants_20261123T03`.execute(db);
}

/**
 * Issue 16: the raw payload (`calls.raw_json`, ~1.4 KB a call, most of each row) moves to a table of
 * its own, `call_payloads`, keyed like `calls` and written in the same transaction: every scan of
 * `calls` (month totals, reconciliation, exports) no longer reads past it, and nothing is lost. The
 * view `calls_with_payload` is `calls` with `raw_json` joined back: an old `select … raw_json from
 * calls` runs unchanged with `calls` replaced by `calls_with_payload`.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  await db.schema
    .createTable('call_payloads')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('raw_json', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('call_payloads_pk', ['app_id', 'session_id'])
    .addForeignKeyConstraint('call_payloads_call_fk', ['app_id', 'session_id'], 'calls', ['app_id', 'session_id'], (fk) => fk.onDelete('cascade'))
    .execute();
  await sql`insert into call_payloads (app_id, session_id, raw_json) select app_id, session_id, raw_json from calls`.execute(db);
  await db.schema.alterTable('calls').dropColumn('raw_json').execute();
  if (d.idType === 'integer') await clusterParticipantsSqlite(db);
  else await db.schema.dropIndex('call_participants_uid').ifExists().execute();
  await sql`create view calls_with_payload as
select c.*, p.raw_json
from calls c
left join call_payloads p on p.app_id = c.app_id and p.session_id = c.session_id`.execute(db);
}

export async function down(db: Db, d: DialectSql): Promise<void> {
  await sql`drop view if exists calls_with_payload`.execute(db);
  await db.schema.alterTable('calls').addColumn('raw_json', 'text', (c) => c.notNull().defaultTo('{}')).execute();
  await sql`update calls set raw_json = coalesce((select p.raw_json from call_payloads p where p.app_id = calls.app_id and p.session_id = calls.session_id), '{}')`.execute(db);
  await db.schema.dropTable('call_payloads').execute();
  if (d.idType === 'integer') {
    // Back to a rowid table (same columns, same key).
    await sql`create temp table participants_20261123T03 as select * from call_participants`.execute(db);
    await sql`drop table call_participants`.execute(db);
    await db.schema
      .createTable('call_participants')
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('uid', 'text', (c) => c.notNull())
      .addColumn('device_id', 'text', (c) => c.notNull())
      .addColumn('total_audio_minutes', 'double precision')
      .addColumn('total_video_minutes', 'double precision')
      .addColumn('total_duration_minutes', 'double precision')
      .addColumn('is_joined', 'bigint', (c) => c.notNull())
      .addColumn('joined_at', 'bigint')
      .addColumn('left_at', 'bigint')
      .addColumn('state', 'text')
      .addPrimaryKeyConstraint('call_participants_pk', ['app_id', 'session_id', 'seq'])
      .addForeignKeyConstraint('call_participants_call_fk', ['app_id', 'session_id'], 'calls', ['app_id', 'session_id'], (fk) => fk.onDelete('cascade'))
      .execute();
    await sql`insert into call_participants select * from temp.participants_20261123T03`.execute(db);
    await sql`drop table temp.participants_20261123T03`.execute(db);
  }
  await db.schema.createIndex('call_participants_uid').on('call_participants').columns(['app_id', 'uid']).execute();
}
