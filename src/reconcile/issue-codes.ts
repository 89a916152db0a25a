/**
 * The codes `call_reconciliation.issues` can hold, in the order the view lists them (defined in
 * migrations/views-20261123.ts, documented in docs/schema.md). The first six compare a final
 * call's totals with each other; the rest (issue 12) say what is odd about the stored record.
 */
export const ISSUE_CODES = [
  'audio_plus_video_ne_total',
  'timer_ne_minutes',
  'participant_count',
  'participant_outside_call',
  'negative_duration',
  'totals_ne_participants',
  'missing_type',
  'unknown_type',
  'missing_status',
  'participant_without_uid',
  'negative_minutes',
  'minutes_beyond_wall_clock',
  'duration_over_24h',
  'recording_missing',
  'joined_zero_minutes',
  'final_without_end',
  'stale_live',
  'details_missing',
] as const;
export type IssueCode = (typeof ISSUE_CODES)[number];

/**
 * The codes that set `flagged`: minute figures no real call can have. Billing counts such calls
 * apart instead of adding their minutes to the totals.
 */
export const FLAGGING_CODES: readonly IssueCode[] = ['negative_minutes', 'minutes_beyond_wall_clock', 'duration_over_24h'];

/**
 * The columns the view gained with migration 20261123T010000_call_details, beyond its `Database`
 * type: merged in with `db.withTables<ReconciliationAdditions>()`. A type alias, not an interface,
 * because withTables wants an index signature.
 */
export type ReconciliationAdditions = {
  call_reconciliation: {
    /** 1 when any of FLAGGING_CODES holds. */
    flagged: number;
    has_recording: number;
    recording_rows: number;
    participant_missing_uid_rows: number;
    participant_negative_rows: number;
    participant_max_minutes: number | null;
    detail_error: string | null;
    stale_at: number | null;
  };
};

/** How a call without a type is labelled where a type is a row label (billing rows, report series). */
export const NO_TYPE = '(none)';
