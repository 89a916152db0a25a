import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';
import { createFiguresView } from './20261126T090000_figures_by_call_id.js';
import { createReconciliation20261130 } from './views-20261130.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** call_figure_rows' columns (20261126T090000). */
const STORED_LIST =
  'app_id, region, type, started_at, is_final, relation, flagged, issue_bits, participant_audio_minutes, participant_video_minutes, participant_total_minutes, call_audio_minutes, call_video_minutes, call_total_minutes, recording_minutes, mismatch_size, call_id';
/** The order of call_figure_rows' key on SQLite (20261126T090000). */
const SQLITE_ORDER = 'app_id, region, type, relation, flagged, issue_bits, call_id';

/**
 * probe73: `minutes_beyond_wall_clock` (one of the checks that flag a call, whose minutes then
 * leave every billed total and are counted apart) compared a call's minutes with its wall clock
 * only when that clock was measurable. A final call with no end, or one ending before it starts,
 * was never held to anything but the 24-hour cap: a participant stated with 1,000 minutes on such
 * a call was billed, unflagged, exit 0, while the same minutes on a two-minute call were flagged.
 * Such a call is now held to the span its participants' own times show (first join to last leave),
 * and without one to none: the 10 minutes of slack are all it may state.
 *
 * The span is stored on `calls` as `participant_span_minutes` (written with the participant rows,
 * like the other participant_* columns, so the view reads calls alone), filled here from the
 * participant rows stored. `call_figures` reads `call_reconciliation`, so both are made again, and
 * the stored copy `call_figure_rows` refilled, since calls may now be flagged that were not.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  // Added once: a database whose later migration rows were removed to run them again (as a test of
  // an earlier migration does) keeps the column, and the fill below is the same either way.
  const calls = (await db.introspection.getTables()).find((t) => t.name === 'calls');
  if (!calls?.columns.some((c) => c.name === 'participant_span_minutes')) {
    await db.schema.alterTable('calls').addColumn('participant_span_minutes', 'double precision').execute();
  }
  await sql`update calls set participant_span_minutes =
              (select (max(p.left_at) - min(p.joined_at)) / 60.0 from call_participant_rows p where p.call_id = calls.call_id)`.execute(db);
  await redefine(db, d, true);
}

export async function down(db: Db, d: DialectSql): Promise<void> {
  await redefine(db, d, false);
  await db.schema.alterTable('calls').dropColumn('participant_span_minutes').execute();
}

async function redefine(db: Db, d: DialectSql, unmeasured: boolean): Promise<void> {
  const sqlite = d.idType === 'integer';
  await sql`drop view call_figures`.execute(db);
  await sql`drop view call_reconciliation`.execute(db);
  await createReconciliation20261130(db, d, true, unmeasured);
  await createFiguresView(db);
  await sql`delete from call_figure_rows`.execute(db);
  await sql.raw(`insert into call_figure_rows (${STORED_LIST}) select ${STORED_LIST} from call_figures${sqlite ? ` order by ${SQLITE_ORDER}` : ''}`).execute(db);
}
