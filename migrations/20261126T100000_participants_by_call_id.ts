import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';
import { createViews20261123 } from './views-20261123.js';
import { createViews20261123b } from './views-20261123b.js';
import { createFiguresView } from './20261126T090000_figures_by_call_id.js';
import { createViews20261126 } from './views-20261126.js';
import { createViews20261126b } from './views-20261126b.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** The columns of a participant after the call's key, in table order (as of 20261123T030000). */
const COLUMNS = ['seq', 'uid', 'device_id', 'total_audio_minutes', 'total_video_minutes', 'total_duration_minutes', 'is_joined', 'joined_at', 'left_at', 'state'];
const COLUMN_DEFS = `"seq" bigint not null, "uid" text not null, "device_id" text not null,
    "total_audio_minutes" double precision, "total_video_minutes" double precision, "total_duration_minutes" double precision,
    "is_joined" bigint not null, "joined_at" bigint, "left_at" bigint, "state" text`;
const cols = (prefix: string): string => COLUMNS.map((c) => `${prefix}"${c}"`).join(', ');

/** The views that read participants: dropped before the table is, made again on the new one. */
const VIEWS = ['user_usage', 'group_call_attendance'];

/**
 * Issue 16 (≤ 2,500 bytes per call): each participant row (~3.7 a call) repeated its call's text key
 * (app_id and a ~33-byte session_id), in the row and, on SQLite, as the WITHOUT ROWID table's key.
 * Participants are now `call_participant_rows`, keyed by (call_id, seq) with the call's integer id
 * (20261126T010000_payload_call_id), as the payloads are: on SQLite a WITHOUT ROWID table clustered
 * by it, so a call's participants are stored together and in call order; a deleted call takes its
 * rows along (foreign key, cascade). `call_participants`, the documented table, becomes a view of
 * the same name, columns and order joining `calls`, so ad hoc SQL that reads it runs unchanged; the
 * views that read participants (views-20261126b.ts) join the new table by call_id.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  const sqlite = d.idType === 'integer';
  for (const v of VIEWS) await sql.raw(`drop view if exists ${v}`).execute(db);
  await sql
    .raw(
      `create table call_participant_rows ("call_id" ${sqlite ? 'integer' : 'bigint'} not null, ${COLUMN_DEFS},
    constraint "call_participant_rows_pk" primary key ("call_id", "seq"),
    constraint "call_participant_rows_call_fk" foreign key ("call_id") references "calls" ("call_id") on delete cascade
  )${sqlite ? ' without rowid' : ''}`,
    )
    .execute(db);
  // In key order: SQLite appends to the table's pages instead of splitting them all over.
  await sql
    .raw(
      `insert into call_participant_rows ("call_id", ${cols('')})
       select c.call_id, ${cols('p.')} from call_participants p join calls c on c.app_id = p.app_id and c.session_id = p.session_id
       order by c.call_id, p.seq`,
    )
    .execute(db);
  await sql`drop table call_participants`.execute(db);
  await sql
    .raw(
      `create view call_participants as
select c.app_id, c.session_id, ${cols('p.')}
from call_participant_rows p
join calls c on c.call_id = p.call_id`,
    )
    .execute(db);
  await createViews20261126b(db, d);
  await monthKeyIndex(db, sqlite ? 'started_month, app_id, participant_rows' : 'started_month, app_id, call_id, participant_rows');
}

/**
 * `calls_month_key` (20261126T020000) served user_usage a month's calls from the index alone, with
 * the key the participants were then found by: (started_month, app_id, session_id). They are found by
 * call_id now, and user_usage counts call_ids: the index drops session_id (~35 bytes a call). On
 * SQLite every index entry ends with the rowid, which is call_id; PostgreSQL's needs it named.
 */
async function monthKeyIndex(db: Db, columns: string): Promise<void> {
  await sql`drop index if exists calls_month_key`.execute(db);
  await sql.raw(`create index calls_month_key on calls (${columns}) where participant_rows >= 0`).execute(db);
}

/**
 * Back to 20261126T030000: `call_participants` a table keyed by (app_id, session_id, seq) again (on
 * SQLite WITHOUT ROWID, as 20261123T030000 made it), and the two views as they were: the view
 * files only create whole sets, so the sets are made again in the order the migrations made them,
 * each dropping what the next one replaces.
 */
export async function down(db: Db, d: DialectSql): Promise<void> {
  const sqlite = d.idType === 'integer';
  for (const v of VIEWS) await sql.raw(`drop view if exists ${v}`).execute(db);
  await sql`drop view if exists call_participants`.execute(db);
  await sql
    .raw(
      `create table call_participants ("app_id" text not null, "session_id" text not null, ${COLUMN_DEFS},
    constraint "call_participants_pk" primary key ("app_id", "session_id", "seq"),
    constraint "call_participants_call_fk" foreign key ("app_id", "session_id") references "calls" ("app_id", "session_id") on delete cascade
  )${sqlite ? ' without rowid' : ''}`,
    )
    .execute(db);
  await sql
    .raw(
      `insert into call_participants ("app_id", "session_id", ${cols('')})
       select c.app_id, c.session_id, ${cols('p.')} from call_participant_rows p join calls c on c.call_id = p.call_id
       order by c.app_id, c.session_id, p.seq`,
    )
    .execute(db);
  await db.schema.dropTable('call_participant_rows').execute();
  // call_reconciliation's text is the same after this as before, but the older view files make it
  // again with the rest: the view call_figures (20261126T090000) reads it, and PostgreSQL refuses
  // to drop a view another depends on, so call_figures goes first and is made again last.
  await sql`drop view if exists call_figures`.execute(db);
  for (const v of ['call_reconciliation', 'daily_usage']) await sql.raw(`drop view if exists ${v}`).execute(db);
  await createViews20261123(db, d);
  for (const v of ['call_reconciliation', 'daily_usage', 'user_usage']) await sql.raw(`drop view ${v}`).execute(db);
  await createViews20261123b(db, d);
  for (const v of ['call_reconciliation', 'user_usage']) await sql.raw(`drop view ${v}`).execute(db);
  await createViews20261126(db, d);
  await createFiguresView(db);
  await monthKeyIndex(db, 'started_month, app_id, session_id, participant_rows');
}
