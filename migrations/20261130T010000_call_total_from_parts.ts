import { sql, type Kysely } from 'kysely';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** call_figure_rows' columns (20261126T090000). */
const STORED_LIST =
  'app_id, region, type, started_at, is_final, relation, flagged, issue_bits, participant_audio_minutes, participant_video_minutes, participant_total_minutes, call_audio_minutes, call_video_minutes, call_total_minutes, recording_minutes, mismatch_size, call_id';
/** Calls stored without `totalDurationInMinutes` that state their audio and video minutes. */
const UNSTATED = 'total_duration_minutes is null and total_audio_minutes is not null and total_video_minutes is not null';

/**
 * A call that states its audio and video minutes but not `totalDurationInMinutes` (which the docs
 * define as audio + video) was stored with a NULL total, and reconcile and billing read it as 0: the
 * month's call-level total 0 beside its user-minutes, its whole user-minutes as the delta, and each
 * such call flagged audio_plus_video_ne_total though nothing it stated disagreed (session 30,
 * helper-64 F4). The transform now stores audio + video there; this does the same for the calls
 * stored before and refreshes their stored figures. Not undone by `down`: which totals were stated
 * is in each call's payload.
 */
export async function up(db: Db): Promise<void> {
  await sql.raw(`delete from call_figure_rows where call_id in (select call_id from calls where ${UNSTATED})`).execute(db);
  await sql.raw(`update calls set total_duration_minutes = total_audio_minutes + total_video_minutes where ${UNSTATED}`).execute(db);
  await sql
    .raw(`insert into call_figure_rows (${STORED_LIST}) select ${STORED_LIST} from call_figures f where not exists (select 1 from call_figure_rows r where r.call_id = f.call_id)`)
    .execute(db);
}

export async function down(): Promise<void> {
  // Nothing: see above.
}
