import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';
import { createViews20261123 } from './views-20261123.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

const VIEWS = ['group_call_attendance', 'user_usage', 'daily_usage', 'call_reconciliation'];

/** New per-call columns (issue 12). */
const CALL_COLUMNS: [string, 'text' | 'bigint' | 'double precision', 'zero' | 'null'][] = [
  ['detail_error', 'text', 'null'],
  ['has_transcription', 'bigint', 'zero'],
  ['metadata_json', 'text', 'null'],
  ['tags_json', 'text', 'null'],
  ['stale_at', 'bigint', 'null'],
  ['participant_missing_uid_rows', 'bigint', 'zero'],
  ['participant_negative_rows', 'bigint', 'zero'],
  ['participant_max_minutes', 'double precision', 'null'],
  ['recording_rows', 'bigint', 'zero'],
];

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
}

/**
 * SQLite cannot drop a NOT NULL constraint, so `calls` is rebuilt. It runs inside the migrator's
 * transaction (all or nothing), where foreign keys cannot be switched off, and dropping `calls`
 * then cascades to participants and recordings: those are copied aside first and put back. The
 * column list is read from the table itself, so every column earlier migrations added comes along.
 */
async function relaxCallsSqlite(db: Db): Promise<void> {
  const cols = (await sql<ColumnInfo>`pragma table_info(calls)`.execute(db)).rows;
  const indexes = (await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and tbl_name = 'calls' and sql is not null`.execute(db)).rows;
  const defs = cols.map((c) => {
    const notNull = c.notnull === 1 && c.name !== 'type' && c.name !== 'status' ? ' not null' : '';
    const dflt = c.dflt_value !== null ? ` default ${c.dflt_value}` : '';
    return `"${c.name}" ${c.type}${notNull}${dflt}`;
  });
  const names = cols.map((c) => `"${c.name}"`).join(', ');
  await sql`create temp table calls_20261123 as select * from calls`.execute(db);
  await sql`create temp table participants_20261123 as select * from call_participants`.execute(db);
  await sql`create temp table recordings_20261123 as select * from call_recordings`.execute(db);
  await sql`drop table calls`.execute(db);
  await sql.raw(`create table calls (${defs.join(', ')}, constraint "calls_pk" primary key ("app_id", "session_id"))`).execute(db);
  await sql.raw(`insert into calls (${names}) select ${names} from temp.calls_20261123`).execute(db);
  await sql`insert into call_participants select * from temp.participants_20261123`.execute(db);
  await sql`insert into call_recordings select * from temp.recordings_20261123`.execute(db);
  for (const t of ['calls_20261123', 'participants_20261123', 'recordings_20261123']) await sql.raw(`drop table temp.${t}`).execute(db);
  for (const i of indexes) await sql.raw(i.sql).execute(db);
  const broken = (await sql`pragma foreign_key_check`.execute(db)).rows;
  if (broken.length > 0) throw new Error(`rebuilding calls broke ${broken.length} foreign key reference(s)`);
}

/**
 * Issue 12: a call keeps its minutes whatever else it lacks. `type` and `status` may be NULL (a call
 * without them is stored and flagged, not rejected); calls gain the reason their details are
 * missing, transcriptions, metaData/tags, a stale mark for live calls stuck too long, and the
 * participant aggregates the new reconciliation checks read; calls whose details must be fetched
 * again are kept in `detail_retries`, whatever their age.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  for (const v of VIEWS) await sql.raw(`drop view if exists ${v}`).execute(db);
  if (d.idType === 'bigserial') {
    await sql`alter table calls alter column type drop not null`.execute(db);
    await sql`alter table calls alter column status drop not null`.execute(db);
  } else {
    await relaxCallsSqlite(db);
  }
  for (const [name, type, dflt] of CALL_COLUMNS) {
    await db.schema.alterTable('calls').addColumn(name, type, (c) => (dflt === 'zero' ? c.notNull().defaultTo(0) : c)).execute();
  }
  await sql`
    update calls set
      recording_rows = (select count(*) from call_recordings r where r.app_id = calls.app_id and r.session_id = calls.session_id),
      participant_max_minutes = (select max(p.total_duration_minutes) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id),
      participant_negative_rows = (select count(*) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id
        and (p.total_audio_minutes < 0 or p.total_video_minutes < 0 or p.total_duration_minutes < 0))
  `.execute(db);

  await db.schema
    .createTable('call_transcriptions')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('tid', 'text', (c) => c.notNull())
    .addColumn('mid', 'text')
    .addColumn('room_name', 'text')
    .addColumn('start_time', 'bigint')
    .addColumn('end_time', 'bigint')
    .addColumn('transcript_date', 'bigint')
    .addColumn('transcript_url', 'text')
    .addPrimaryKeyConstraint('call_transcriptions_pk', ['app_id', 'session_id', 'tid'])
    .addForeignKeyConstraint('call_transcriptions_call_fk', ['app_id', 'session_id'], 'calls', ['app_id', 'session_id'], (fk) => fk.onDelete('cascade'))
    .execute();

  await db.schema
    .createTable('detail_retries')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('attempts', 'bigint', (c) => c.notNull())
    .addColumn('first_at', 'bigint', (c) => c.notNull())
    .addColumn('last_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('detail_retries_pk', ['app_id', 'session_id'])
    .execute();
  await db.schema.createIndex('detail_retries_app').on('detail_retries').columns(['app_id', 'region']).execute();

  await createViews20261123(db, d);
}

export async function down(db: Db): Promise<void> {
  // The views of this migration read its columns: they go with it (the earlier definitions are
  // re-created by migrating down past 20261122T010000_reporting and up again).
  for (const v of VIEWS) await sql.raw(`drop view if exists ${v}`).execute(db);
  await db.schema.dropTable('detail_retries').ifExists().execute();
  await db.schema.dropTable('call_transcriptions').ifExists().execute();
  for (const [name] of [...CALL_COLUMNS].reverse()) await db.schema.alterTable('calls').dropColumn(name).execute();
}
