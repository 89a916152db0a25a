import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';
import { createViews20261123b } from './views-20261123b.js';
import { createViews20261126 } from './views-20261126.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** The views this migration redefines (daily_usage and group_call_attendance stay). */
const VIEWS = ['user_usage', 'call_reconciliation'];

/** call_figures' columns, in table order, each as call_reconciliation gives it. */
const FIGURES: [string, string][] = [
  ['app_id', 'app_id'],
  ['session_id', 'session_id'],
  ['region', 'region'],
  // As billing rows label it: a call without a type is '(none)' (NO_TYPE in src/reconcile/issue-codes.ts).
  ['type', `coalesce(type, '(none)')`],
  ['started_at', 'started_at'],
  ['is_final', 'is_final'],
  ['relation', 'relation'],
  ['flagged', 'flagged'],
  ['issue_bits', 'issue_bits'],
  ['participant_audio_minutes', 'participant_audio_minutes'],
  ['participant_video_minutes', 'participant_video_minutes'],
  ['participant_total_minutes', 'participant_total_minutes'],
  ['call_audio_minutes', 'coalesce(total_audio_minutes, 0)'],
  ['call_video_minutes', 'coalesce(total_video_minutes, 0)'],
  ['call_total_minutes', 'coalesce(total_duration_minutes, 0)'],
  ['recording_minutes', 'recording_minutes'],
  ['mismatch_size', 'abs(audio_delta_minutes) + abs(video_delta_minutes)'],
];
const COLUMNS = FIGURES.map(([c]) => c).join(', ');
/** The figures of the calls `where` selects, from the view: the checks are written once, in the view. */
const select = (where: string): string => `select ${FIGURES.map(([c, e]) => (c === e ? c : `${e} as ${c}`)).join(', ')} from call_reconciliation ${where}`;
const TOLERANCE_KEY = `'reconcile_tolerance_minutes'`;
/**
 * The order of call_figures' key on SQLite: a whole refill written in it appends to the table's
 * pages instead of splitting them all over (at a million calls, four times faster and smaller).
 */
const SQLITE_ORDER = `app_id, region, coalesce(type, '(none)'), relation, flagged, issue_bits, session_id`;

/**
 * Issue 16: `callsync reconcile` and `callsync export billing` over a million calls, and
 * `user_usage` for a month.
 *
 * - `call_figures`: per call, what reconcile and billing sum and group by, as `call_reconciliation`
 *   computes it (relation, flag, issue codes as `issue_bits`, the minute figures). The view's some
 *   thirty comparisons per call cost SQLite ~2 µs a call on every pass; reconcile made four passes
 *   over every call. Kept by triggers, not by the code that writes: every write to `calls` (the
 *   upsert, a stale or not-found mark, a detail error, any future writer) and every change of the
 *   tolerance (`callsync_settings`, which the relation and two codes depend on) refreshes it from
 *   the view itself, so it cannot drift from the view, whose text stays the one definition. A
 *   deleted call takes its row along (foreign key). A later migration that changes the view's
 *   checks must refill it; one that rebuilds `calls` on SQLite must create the triggers again.
 * - `call_reconciliation` gains `issue_bits` (views-20261126.ts).
 * - `calls_month_key` (started_month, app_id, session_id): `user_usage` for a month finds the
 *   month's calls and their keys in the index, without reading one call row, and reads their
 *   participants in key order, the order call_participants is stored in. Those reads, scattered over
 *   both tables, made it 2.8× the lean layout at a million calls. The index is partial on a
 *   condition every call meets (`participant_rows >= 0`: a count, never null) and which only the
 *   user_usage view states, so that no other query reads through it: as a plain index, SQLite chose
 *   it for `daily_usage` and the month totals of `calls` too, and visited their rows in key order,
 *   scattered, instead of in rowid order through calls_started_month (3× slower at 200,000 calls).
 *   participant_rows is in it so that the view's condition is read from the index.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  for (const v of VIEWS) await sql.raw(`drop view if exists ${v}`).execute(db);
  await sql`create index calls_month_key on calls (started_month, app_id, session_id, participant_rows) where participant_rows >= 0`.execute(db);
  await createViews20261126(db, d);
  await createFiguresTable(db, d);
  await sql.raw(`insert into call_figures (${COLUMNS}) ${select('')}${d.idType === 'integer' ? ` order by ${SQLITE_ORDER}` : ''}`).execute(db);
  if (d.idType === 'integer') await sqliteTriggers(db);
  else await postgresTriggers(db);
}

/**
 * SQLite: a WITHOUT ROWID table clustered by what reconcile and billing group by (app, region, type,
 * relation, flag, issue codes), so both read it in the order of their groups and aggregate as they
 * scan: SQLite has no hash aggregation, and sorting every call by its group was most of both
 * queries (200,000 calls: billing of six months 256 → 60 ms, reconcile 156 → 39 ms). The call's key
 * is a unique index beside it, for the triggers and the foreign key. No index on started_at: a
 * period filter is applied during that scan. PostgreSQL aggregates by hashing: its primary key is
 * the call's key.
 */
async function createFiguresTable(db: Db, d: DialectSql): Promise<void> {
  const sqlite = d.idType === 'integer';
  const cols = `"app_id" text not null, "session_id" text not null, "region" text not null, "type" text not null, "started_at" bigint,
    "is_final" bigint not null, "relation" text not null, "flagged" bigint not null, "issue_bits" bigint not null,
    "participant_audio_minutes" double precision not null, "participant_video_minutes" double precision not null,
    "participant_total_minutes" double precision not null, "call_audio_minutes" double precision not null,
    "call_video_minutes" double precision not null, "call_total_minutes" double precision not null,
    "recording_minutes" double precision not null, "mismatch_size" double precision,
    constraint "call_figures_pk" primary key (${sqlite ? '"app_id", "region", "type", "relation", "flagged", "issue_bits", "session_id"' : '"app_id", "session_id"'}),
    constraint "call_figures_call_fk" foreign key ("app_id", "session_id") references "calls" ("app_id", "session_id") on delete cascade`;
  await sql.raw(`create table call_figures (${cols})${sqlite ? ' without rowid' : ''}`).execute(db);
  if (sqlite) await sql.raw('create unique index call_figures_key on call_figures (app_id, session_id)').execute(db);
}

async function sqliteTriggers(db: Db): Promise<void> {
  // Delete, then insert: not INSERT OR REPLACE, whose policy an UPSERT into calls (the store's
  // write) overrides with its own, making a second write of a call fail on the key.
  const key = 'app_id = new.app_id and session_id = new.session_id';
  const one = `delete from call_figures where ${key}; insert into call_figures (${COLUMNS}) ${select(`where ${key}`)};`;
  const all = `delete from call_figures; insert into call_figures (${COLUMNS}) ${select('')} order by ${SQLITE_ORDER};`;
  await sql.raw(`create trigger call_figures_insert after insert on calls begin ${one} end`).execute(db);
  await sql.raw(`create trigger call_figures_update after update on calls begin ${one} end`).execute(db);
  await sql.raw(`create trigger call_figures_tolerance_insert after insert on callsync_settings when new.key = ${TOLERANCE_KEY} begin ${all} end`).execute(db);
  await sql
    .raw(
      `create trigger call_figures_tolerance_update after update on callsync_settings
       when (new.key = ${TOLERANCE_KEY} or old.key = ${TOLERANCE_KEY}) and (new.key is not old.key or new.value is not old.value) begin ${all} end`,
    )
    .execute(db);
  await sql.raw(`create trigger call_figures_tolerance_delete after delete on callsync_settings when old.key = ${TOLERANCE_KEY} begin ${all} end`).execute(db);
}

/**
 * PostgreSQL: statement-level triggers with the changed rows as a transition table, one refresh
 * per statement (a multi-row upsert is one), instead of one per row. A transition table serves
 * one event only: insert and update have a trigger each. The changed keys go in as two arrays, `=
 * any(…)` on both key columns: an index scan of calls_pk for those keys. Joined to the transition
 * table instead, the view was planned as a scan of every call per statement (half a second per
 * 1,000-call batch at 100,000 calls). The arrays select a superset of the changed calls when a
 * statement writes several apps; the others are refreshed to what they were.
 */
async function postgresTriggers(db: Db): Promise<void> {
  const updates = FIGURES.filter(([c]) => c !== 'app_id' && c !== 'session_id').map(([c]) => `${c} = excluded.${c}`).join(', ');
  await sql
    .raw(
      `create function call_figures_refresh() returns trigger language plpgsql as $$
declare
  apps text[];
  sessions text[];
begin
  select array_agg(distinct app_id), array_agg(session_id) into apps, sessions from changed_calls;
  if sessions is null then return null; end if;
  insert into call_figures (${COLUMNS})
  ${select('where app_id = any(apps) and session_id = any(sessions)')}
  on conflict (app_id, session_id) do update set ${updates};
  return null;
end $$`,
    )
    .execute(db);
  for (const event of ['insert', 'update']) {
    await sql
      .raw(`create trigger call_figures_${event} after ${event} on calls referencing new table as changed_calls for each statement execute function call_figures_refresh()`)
      .execute(db);
  }
  await sql
    .raw(
      `create function call_figures_refresh_all() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and new.key = old.key and new.value is not distinct from old.value then return null; end if;
  if (tg_op <> 'DELETE' and new.key = ${TOLERANCE_KEY}) or (tg_op <> 'INSERT' and old.key = ${TOLERANCE_KEY}) then
    delete from call_figures;
    insert into call_figures (${COLUMNS}) ${select('')};
  end if;
  return null;
end $$`,
    )
    .execute(db);
  await sql.raw(`create trigger call_figures_tolerance after insert or update or delete on callsync_settings for each row execute function call_figures_refresh_all()`).execute(db);
}

export async function down(db: Db, d: DialectSql): Promise<void> {
  if (d.idType === 'integer') {
    for (const t of ['insert', 'update', 'tolerance_insert', 'tolerance_update', 'tolerance_delete']) await sql.raw(`drop trigger if exists call_figures_${t}`).execute(db);
  } else {
    await sql.raw('drop trigger if exists call_figures_tolerance on callsync_settings').execute(db);
    for (const e of ['insert', 'update']) await sql.raw(`drop trigger if exists call_figures_${e} on calls`).execute(db);
    await sql.raw('drop function if exists call_figures_refresh_all()').execute(db);
    await sql.raw('drop function if exists call_figures_refresh()').execute(db);
  }
  await db.schema.dropTable('call_figures').execute();
  for (const v of VIEWS) await sql.raw(`drop view if exists ${v}`).execute(db);
  await db.schema.dropIndex('calls_month_key').execute();
  // views-20261123b.ts creates three views: daily_usage, untouched by up, is dropped to be made again.
  await sql`drop view if exists daily_usage`.execute(db);
  await createViews20261123b(db, d);
}
