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
 * probe68 F7: `minutes_beyond_wall_clock` (one of the checks that flag a call, whose minutes then
 * leave every billed total) held the sum of a call's entries to wall clock × entries × 1.5 + 10,
 * "each entry can be in the call for its whole wall clock". Entries with few or no minutes (an
 * invited group's unanswered members) lent their room to one entry, so a participant stated with
 * more minutes than the whole call can hold was billed, unflagged. The view now also holds each
 * entry (its largest, `participant_max_minutes`) to wall clock × 1.5 + 10.
 *
 * `call_figures` reads `call_reconciliation` (PostgreSQL refuses to drop a view another reads): it is
 * dropped and made again, and the stored copy `call_figure_rows` refilled, since calls may now be
 * flagged that were not.
 */
export async function up(db: Db, d: DialectSql): Promise<void> {
  await redefine(db, d, true);
}

export async function down(db: Db, d: DialectSql): Promise<void> {
  await redefine(db, d, false);
}

async function redefine(db: Db, d: DialectSql, perEntry: boolean): Promise<void> {
  const sqlite = d.idType === 'integer';
  await sql`drop view call_figures`.execute(db);
  await sql`drop view call_reconciliation`.execute(db);
  await createReconciliation20261130(db, d, perEntry);
  await createFiguresView(db);
  await sql`delete from call_figure_rows`.execute(db);
  await sql.raw(`insert into call_figure_rows (${STORED_LIST}) select ${STORED_LIST} from call_figures${sqlite ? ` order by ${SQLITE_ORDER}` : ''}`).execute(db);
}
