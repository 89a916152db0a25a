import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';
import { down as reconcileSpeedDown, up as reconcileSpeedUp } from './20261126T020000_reconcile_speed.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** call_figures' columns as 20261126T020000 defined them, each as call_reconciliation (`v`) gives it. */
const FIGURES: [string, string][] = [
  ['app_id', 'v.app_id'],
  ['session_id', 'v.session_id'],
  ['region', 'v.region'],
  // As billing rows label it: a call without a type is '(none)' (NO_TYPE in src/reconcile/issue-codes.ts).
  ['type', `coalesce(v.type, '(none)')`],
  ['started_at', 'v.started_at'],
  ['is_final', 'v.is_final'],
  ['relation', 'v.relation'],
  ['flagged', 'v.flagged'],
  ['issue_bits', 'v.issue_bits'],
  ['participant_audio_minutes', 'v.participant_audio_minutes'],
  ['participant_video_minutes', 'v.participant_video_minutes'],
  ['participant_total_minutes', 'v.participant_total_minutes'],
  ['call_audio_minutes', 'coalesce(v.total_audio_minutes, 0)'],
  ['call_video_minutes', 'coalesce(v.total_video_minutes, 0)'],
  ['call_total_minutes', 'coalesce(v.total_duration_minutes, 0)'],
  ['recording_minutes', 'v.recording_minutes'],
  ['mismatch_size', 'abs(v.audio_delta_minutes) + abs(v.video_delta_minutes)'],
  // Added: the call's integer key, which the stored copy is keyed by.
  ['call_id', 'c.call_id'],
];
/** The stored copy's columns: every figure but the text key session_id (call_id stands for it). */
const STORED = FIGURES.map(([c]) => c).filter((c) => c !== 'session_id');
const STORED_LIST = STORED.join(', ');
const TOLERANCE_KEY = `'reconcile_tolerance_minutes'`;
/** The order of call_figure_rows' key on SQLite (see createStoredTable). */
const SQLITE_ORDER = 'app_id, region, type, relation, flagged, issue_bits, call_id';
/** Every call's figures into the (empty) stored copy, from the view, in the order it is stored in. */
const fillAll = (sqlite: boolean): string =>
  `insert into call_figure_rows (${STORED_LIST}) select ${STORED_LIST} from call_figures${sqlite ? ` order by ${SQLITE_ORDER}` : ''}`;
/** The same as a trigger's body: empty the copy, then fill it. */
const refillAll = (sqlite: boolean): string => `delete from call_figure_rows; ${fillAll(sqlite)};`;

/**
 * Issue 16 (CPU per synced call, bytes per call): the per-call figures of reconcile and billing are
 * no longer kept by a trigger per written row, nor keyed by the call's text key.
 *
 * - `call_figures` becomes a view of the same name and columns (plus `call_id`, last): per call,
 *   what `call_reconciliation` computes, mapped as the table held it. It is the one definition of
 *   what the stored copy holds, and ad hoc SQL reading it gets the same figures as before (always
 *   current, even after ad hoc writes to `calls`).
 * - `call_figure_rows`: the stored copy reconcile and billing read, keyed by `call_id` (references
 *   calls, on delete cascade) instead of (app_id, session_id): no session id stored, no text index
 *   (table and index 222 → 146 bytes per call at 200,000 calls). On SQLite still clustered by
 *   billing's groups, with call_id last, and a unique index on call_id (refreshes, the cascade).
 * - Per-row triggers on `calls` are gone (SQLite: one delete and one insert from the view per
 *   written call, tens of µs per call of a sync, growing with the table); so are PostgreSQL's
 *   statement-level ones, so that both destinations work one way. The store refreshes the copy
 *   itself, from the view, once per batch of calls it writes (store/call-figures-repo.ts; on
 *   PostgreSQL through the function call_figures_refresh, whose plans are kept): the sync's
 *   upsert, the not-found and stale marks, `copy`. A change of the tolerance still refills
 *   the whole copy by trigger (a rare, whole-table event, whoever makes it).
 *
 * A later migration that redefines `call_reconciliation` drops `call_figures` first (PostgreSQL
 * refuses to drop a view another view reads), makes it again, and refills `call_figure_rows`
 * (the tolerance triggers' statements) if the checks changed.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  const sqlite = d.idType === 'integer';
  if (sqlite) {
    for (const t of ['insert', 'update', 'tolerance_insert', 'tolerance_update', 'tolerance_delete']) await sql.raw(`drop trigger if exists call_figures_${t}`).execute(db);
  } else {
    await sql.raw('drop trigger if exists call_figures_tolerance on callsync_settings').execute(db);
    for (const e of ['insert', 'update']) await sql.raw(`drop trigger if exists call_figures_${e} on calls`).execute(db);
    await sql.raw('drop function if exists call_figures_refresh_all()').execute(db);
    await sql.raw('drop function if exists call_figures_refresh()').execute(db);
  }
  await sql`drop table call_figures`.execute(db);
  await createFiguresView(db);
  await createStoredTable(db, sqlite);
  await sql.raw(fillAll(sqlite)).execute(db);
  await toleranceTriggers(db, sqlite);
}

/**
 * A plain join (not `calls cross join` the view): SQLite then reads every call in rowid order for
 * a whole refill, and for a filter on the view's (app_id, session_id) searches both sides by the
 * key. The refreshes filter on that key.
 */
export async function createFiguresView(db: Db): Promise<void> {
  const cols = FIGURES.map(([c, e]) => (e === `v.${c}` || e === `c.${c}` ? e : `${e} as ${c}`)).join(', ');
  await sql.raw(`create view call_figures as select ${cols} from call_reconciliation v join calls c on c.app_id = v.app_id and c.session_id = v.session_id`).execute(db);
}

/**
 * SQLite: WITHOUT ROWID, clustered by what reconcile and billing group by (app, region, type,
 * relation, flag, issue codes), so both aggregate as they read it (20261126T020000); call_id last
 * makes the key unique, and a new call lands at the end of its group. PostgreSQL aggregates by
 * hashing: call_id is its key.
 */
async function createStoredTable(db: Db, sqlite: boolean): Promise<void> {
  const cols = `"app_id" text not null, "region" text not null, "type" text not null, "started_at" bigint,
    "is_final" bigint not null, "relation" text not null, "flagged" bigint not null, "issue_bits" bigint not null,
    "participant_audio_minutes" double precision not null, "participant_video_minutes" double precision not null,
    "participant_total_minutes" double precision not null, "call_audio_minutes" double precision not null,
    "call_video_minutes" double precision not null, "call_total_minutes" double precision not null,
    "recording_minutes" double precision not null, "mismatch_size" double precision,
    "call_id" ${sqlite ? 'integer' : 'bigint'} not null,
    constraint "call_figure_rows_pk" primary key (${sqlite ? SQLITE_ORDER.split(', ').map((c) => `"${c}"`).join(', ') : '"call_id"'}),
    constraint "call_figure_rows_call_fk" foreign key ("call_id") references "calls" ("call_id") on delete cascade`;
  await sql.raw(`create table call_figure_rows (${cols})${sqlite ? ' without rowid' : ''}`).execute(db);
  if (sqlite) await sql.raw('create unique index call_figure_rows_call on call_figure_rows (call_id)').execute(db);
}

/** A change of the tolerance (which the relation and two issue codes depend on) refills the copy. */
async function toleranceTriggers(db: Db, sqlite: boolean): Promise<void> {
  if (sqlite) {
    const all = refillAll(true);
    await sql.raw(`create trigger call_figures_tolerance_insert after insert on callsync_settings when new.key = ${TOLERANCE_KEY} begin ${all} end`).execute(db);
    await sql
      .raw(
        `create trigger call_figures_tolerance_update after update on callsync_settings
         when (new.key = ${TOLERANCE_KEY} or old.key = ${TOLERANCE_KEY}) and (new.key is not old.key or new.value is not old.value) begin ${all} end`,
      )
      .execute(db);
    await sql.raw(`create trigger call_figures_tolerance_delete after delete on callsync_settings when old.key = ${TOLERANCE_KEY} begin ${all} end`).execute(db);
    return;
  }
  await sql
    .raw(
      `create function call_figures_refresh_all() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and new.key = old.key and new.value is not distinct from old.value then return null; end if;
  if (tg_op <> 'DELETE' and new.key = ${TOLERANCE_KEY}) or (tg_op <> 'INSERT' and old.key = ${TOLERANCE_KEY}) then
    ${refillAll(false)}
  end if;
  return null;
end $$`,
    )
    .execute(db);
  await sql.raw(`create trigger call_figures_tolerance after insert or update or delete on callsync_settings for each row execute function call_figures_refresh_all()`).execute(db);
  // The store's refresh of a batch of calls, as a function: PL/pgSQL plans its statements once per
  // session, where the same statements sent as SQL were planned on every batch (the view is large:
  // ~25 ms of planning per statement, more than running it). The keys go in as an array, `= any`:
  // an index scan of calls_pk (20261126T020000's triggers found the same).
  await sql
    .raw(
      `create function call_figures_refresh(p_app_id text, p_session_ids text[]) returns void language plpgsql as $$
begin
  delete from call_figure_rows where call_id in (select call_id from calls where app_id = p_app_id and session_id = any(p_session_ids));
  insert into call_figure_rows (${STORED_LIST}) select ${STORED_LIST} from call_figures where app_id = p_app_id and session_id = any(p_session_ids);
end $$`,
    )
    .execute(db);
}

/**
 * Back to 20261126T020000: its down, then its up, which make the table `call_figures` with its
 * triggers again and fill it from the view (and the views and index it made, the same again).
 * Its down drops a table `call_figures`: an empty one stands in for the view this migration made.
 */
export async function down(db: Db, d: DialectSql): Promise<void> {
  const sqlite = d.idType === 'integer';
  if (sqlite) {
    for (const t of ['tolerance_insert', 'tolerance_update', 'tolerance_delete']) await sql.raw(`drop trigger if exists call_figures_${t}`).execute(db);
  } else {
    await sql.raw('drop trigger if exists call_figures_tolerance on callsync_settings').execute(db);
    await sql.raw('drop function if exists call_figures_refresh_all()').execute(db);
    await sql.raw('drop function if exists call_figures_refresh(text, text[])').execute(db);
  }
  await sql`drop view call_figures`.execute(db);
  await sql`drop table call_figure_rows`.execute(db);
  await sql`create table call_figures (placeholder integer)`.execute(db);
  await reconcileSpeedDown(db, d);
  await reconcileSpeedUp(db, d);
}
