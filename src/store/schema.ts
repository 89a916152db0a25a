import type { Generated, Insertable, Selectable } from 'kysely';

// The database's tables and row shapes: the contract between transform (which produces rows) and
// the store (which writes and reads them). Types only, importing nothing from src/: transform, below
// the store, imports these types and nothing else of the store (`import type`, checked by the
// transform-to-store-types-only rule of .dependency-cruiser.cjs).

/**
 * Table types for Kysely. These names are the public contract for ad hoc SQL (docs/schema.md);
 * columns may be added, never renamed. Times are unix seconds; minutes are REAL.
 */
export interface CallsTable {
  app_id: string;
  region: string;
  session_id: string;
  /** NULL when the service sent none (the call is kept and flagged, issue 12). */
  type: string | null;
  mode: string | null;
  receiver_type: string | null;
  receiver: string | null;
  initiator: string | null;
  /** NULL when the service sent none. */
  status: string | null;
  /** 1 when the status can no longer change (ended, unanswered, rejected, canceled, …). */
  is_final: number;
  total_audio_minutes: number | null;
  total_video_minutes: number | null;
  total_duration_minutes: number | null;
  total_duration: string | null;
  total_duration_seconds: number | null;
  total_participants: number | null;
  has_recording: number;
  initiated_at: number | null;
  started_at: number | null;
  ended_at: number | null;
  /** 'list' when the List Calls entry was complete enough to store, 'detail' when Get Call supplied it. */
  details_source: string;
  /** Hash of the last List Calls entry: an unchanged entry needs no Get Call. */
  list_fingerprint: string | null;
  not_found_at: number | null;
  first_synced_at: number;
  synced_at: number;
  // Aggregates of this call's participant and recording rows, written with them (migration 2):
  // reconciliation and exports read calls alone.
  participant_rows: number;
  joined_devices: number;
  joined_users: number;
  participant_audio_minutes: number;
  participant_video_minutes: number;
  participant_total_minutes: number;
  /** Participant rows whose joinedAt/leftAt fall outside [started_at, ended_at]. */
  participant_outside_rows: number;
  recording_minutes: number;
  // Migration 20261123T010000_call_details (issue 12).
  /** Why Get Call could not supply the details (the call is stored from its list entry and retried); NULL otherwise. */
  detail_error: string | null;
  has_transcription: number;
  /** `metaData` and `tags` as received (JSON text); NULL when absent. */
  metadata_json: string | null;
  tags_json: string | null;
  /** Set when a live call stayed initiated/ongoing longer than liveMaxDays: it is no longer fetched every run. */
  stale_at: number | null;
  participant_missing_uid_rows: number;
  participant_negative_rows: number;
  participant_max_minutes: number | null;
  recording_rows: number;
  /**
   * Migration 20261130T050000 (probe73): minutes from the first join to the last leave over the
   * call's participant rows; NULL when none has a join time or none a leave time. What a final call
   * whose own wall clock cannot be measured is held to (minutes_beyond_wall_clock).
   */
  participant_span_minutes: number | null;
  // Migration 20261123T040000_period_columns (issue 16): the UTC day and month of started_at, stored
  // so that period filters on the reporting views are served by an index. NULL when started_at is.
  /** 'YYYY-MM-DD' (UTC) of started_at. */
  started_day: string | null;
  /** 'YYYY-MM' (UTC) of started_at. */
  started_month: string | null;
  /**
   * Migration 20261126T010000 (issue 16): the call's integer id in this database (SQLite: the rowid),
   * assigned when the call is first stored; the key of its payload row.
   */
  call_id: Generated<number>;
}

/**
 * The raw payload of each call, as received (last write wins), written in the same transaction as
 * the call. Off `calls` (migration 20261123T030000) so that scans of `calls` do not read ~1.4 KB of
 * JSON per row. Stored in `call_payload_rows` by `calls.call_id` since 20261126T010000; this is the
 * view `call_payloads` (the documented columns), and what the transform hands the store.
 */
export interface CallPayloadsTable {
  app_id: string;
  session_id: string;
  /** The last payload as received (JSON text), unknown fields included. */
  raw_json: string;
}

/** Where the payloads are stored (20261126T010000): one row per call, by its integer id. */
export interface CallPayloadRowsTable {
  call_id: number;
  raw_json: string;
}

export interface CallTranscriptionsTable {
  app_id: string;
  session_id: string;
  tid: string;
  mid: string | null;
  room_name: string | null;
  start_time: number | null;
  end_time: number | null;
  transcript_date: number | null;
  transcript_url: string | null;
}

/** Calls whose details must be fetched again on later runs, whatever their age (issue 12). */
export interface DetailRetriesTable {
  app_id: string;
  region: string;
  session_id: string;
  /** Why: 'unusable_detail' (Get Call answered something unusable), 'get_failed', 'live_not_found', 'unconfirmed_not_found'. */
  reason: string;
  attempts: number;
  first_at: number;
  last_at: number;
}

/**
 * A call's participants, one row per entry of its participants array. Stored in
 * `call_participant_rows` by `calls.call_id` since 20261126T100000; this is the view
 * `call_participants` (the documented columns), and what the transform hands the store.
 */
export interface CallParticipantsTable {
  app_id: string;
  session_id: string;
  /** Position in the call's participants array: a uid on two devices, or two entries with no device, stay distinct. */
  seq: number;
  uid: string;
  device_id: string;
  total_audio_minutes: number | null;
  total_video_minutes: number | null;
  total_duration_minutes: number | null;
  is_joined: number;
  joined_at: number | null;
  left_at: number | null;
  state: string | null;
}

/** Where the participants are stored (20261126T100000): keyed by the call's integer id and seq. */
export type CallParticipantRowsTable = Omit<CallParticipantsTable, 'app_id' | 'session_id'> & { call_id: number };

export interface CallRecordingsTable {
  app_id: string;
  session_id: string;
  rid: string;
  duration_minutes: number | null;
  start_time: number | null;
  end_time: number | null;
  recording_url: string | null;
}

export interface RejectedRecordsTable {
  id: Generated<number>;
  app_id: string;
  endpoint: string;
  record_key: string;
  reason: string;
  payload: string;
  /** Hash of the payload: the same bad record seen again is not stored twice. */
  fingerprint: string;
  run_id: string;
  /** The region of the run that filed it (null: filed before 20261129T000000 by a run of the app in two regions, or by verify's repair before session 26). */
  region: string | null;
  created_at: number;
  /** When a full listing proved complete last no longer showed it (null: still listed); such a record no longer counts as a call the service holds. */
  unlisted_at: number | null;
}

export interface SyncRunsTable {
  id: Generated<number>;
  run_id: string;
  app_id: string;
  region: string;
  mode: string;
  started_at: number;
  ended_at: number | null;
  status: string;
  pages: Generated<number>;
  calls_seen: Generated<number>;
  calls_written: Generated<number>;
  calls_from_list: Generated<number>;
  detail_fetches: Generated<number>;
  not_found: Generated<number>;
  requests: Generated<number>;
  retries: Generated<number>;
  rate_limited: Generated<number>;
  rejected: Generated<number>;
  groups_synced: Generated<number>;
  members_synced: Generated<number>;
  error: string | null;
  /** The order the listing was observed in: newest-first, oldest-first, unordered or unknown. */
  listing_order: string | null;
  /** Distinct calls the run listed, and the total the service reported (its smallest in the run). */
  listed_distinct: number | null;
  reported_total: number | null;
  /** 1 when the listing was proved complete (read to its end and adding up, or an incremental window that checked out). */
  listing_complete: number | null;
  /** The process that runs it (pid on host): a 'running' run whose process is gone is abandoned. Null before 20261123T020000. */
  pid: number | null;
  host: string | null;
}

export interface SyncStateTable {
  app_id: string;
  region: string;
  /** Newest startedAt seen by a completed listing: incremental runs re-list back to this minus the lookback. */
  watermark_started_at: number | null;
  last_success_at: number | null;
  last_full_sync_at: number | null;
  updated_at: number;
}

export interface CallsyncSettingsTable {
  key: string;
  value: string;
}

export interface GroupMembersTable {
  app_id: string;
  guid: string;
  uid: string;
  name: string | null;
  avatar: string | null;
  link: string | null;
  metadata_json: string | null;
  status: string | null;
  role: string | null;
  scope: string | null;
  joined_at: number | null;
  created_at: number | null;
  updated_at: number | null;
  conversation_id: string | null;
  synced_at: number;
}

export interface SyncedGroupsTable {
  app_id: string;
  guid: string;
  /** 'ok', or 'not_found' when the service answered ERR_GUID_NOT_FOUND (the group was deleted). */
  status: string;
  members: number;
  synced_at: number;
  not_found_at: number | null;
  /** The region whose run marked it 'failed' (only that region's next run reads it again); null before 20261130T020000. */
  failed_region?: string | null;
}

/**
 * Per call, what `callsync reconcile` and `callsync export billing` group by and sum, as
 * `call_reconciliation` computes it at the database's tolerance: the stored copy they read
 * (migration 20261126T090000), keyed by call_id. The store refreshes it from the view `call_figures`
 * for every batch of calls it writes (store/call-figures-repo.ts); a change of the tolerance
 * refills it by trigger.
 */
export interface CallFigureRowsTable {
  call_id: number;
  app_id: string;
  region: string;
  /** The call's type, '(none)' without one (NO_TYPE: as billing rows label it). */
  type: string;
  started_at: number | null;
  is_final: number;
  relation: string;
  flagged: number;
  /** Bit i set: the i-th of ISSUE_CODES applies (the view's `issue_bits`). */
  issue_bits: number;
  participant_audio_minutes: number;
  participant_video_minutes: number;
  participant_total_minutes: number;
  /** The call-level totals, 0 where the service sent none (as the view's sums count them). */
  call_audio_minutes: number;
  call_video_minutes: number;
  call_total_minutes: number;
  recording_minutes: number;
  /** |audio delta| + |video delta|: how far a mismatch is off (reconcile lists the worst first). */
  mismatch_size: number | null;
}

/** The view the stored copy is refreshed from (a table until 20261126T090000, with the same columns). */
export type CallFiguresView = CallFigureRowsTable & { session_id: string };

/** Read-only views (migration 2); documented in docs/schema.md. */
export type CallReconciliationView = Pick<
  CallsTable,
  | 'app_id' | 'region' | 'session_id' | 'type' | 'mode' | 'receiver_type' | 'receiver' | 'initiator' | 'status'
  | 'is_final' | 'started_at' | 'ended_at' | 'not_found_at' | 'details_source'
  | 'participant_audio_minutes' | 'participant_video_minutes' | 'participant_total_minutes'
  | 'total_audio_minutes' | 'total_video_minutes' | 'total_duration_minutes' | 'total_duration' | 'total_duration_seconds'
  | 'participant_rows' | 'joined_devices' | 'joined_users' | 'total_participants' | 'recording_minutes'
> & {
  wall_clock_minutes: number | null;
  audio_delta_minutes: number;
  video_delta_minutes: number;
  total_delta_minutes: number;
  wall_clock_delta_minutes: number | null;
  timer_delta_minutes: number | null;
  tolerance: number;
  relation: 'participant_sum' | 'wall_clock' | 'mismatch' | 'incomplete';
  issues: string;
};

export interface LeasesTable {
  name: string;
  holder: string;
  pid: number;
  host: string;
  acquired_at: number;
  renewed_at: number;
  /** Unix milliseconds; a lease past it may be taken over. */
  expires_at: number;
}


export interface Database {
  calls: CallsTable;
  /** A view since 20261126T010000 (calls joined to call_payload_rows). */
  call_payloads: CallPayloadsTable;
  call_payload_rows: CallPayloadRowsTable;
  /** A view since 20261126T100000 (calls joined to call_participant_rows). */
  call_participants: CallParticipantsTable;
  call_participant_rows: CallParticipantRowsTable;
  call_recordings: CallRecordingsTable;
  rejected_records: RejectedRecordsTable;
  sync_runs: SyncRunsTable;
  call_transcriptions: CallTranscriptionsTable;
  detail_retries: DetailRetriesTable;
  sync_state: SyncStateTable;
  callsync_settings: CallsyncSettingsTable;
  group_members: GroupMembersTable;
  synced_groups: SyncedGroupsTable;
  call_reconciliation: CallReconciliationView;
  call_figures: CallFiguresView;
  call_figure_rows: CallFigureRowsTable;
  /** `calls` with `raw_json` joined back from `call_payloads` (migration 20261123T030000). */
  calls_with_payload: CallsTable & Pick<CallPayloadsTable, 'raw_json'>;
  leases: LeasesTable;
}

export type CallRow = Selectable<CallsTable>;
export type NewCallRow = Insertable<CallsTable>;
export type NewCallPayloadRow = Insertable<CallPayloadsTable>;
export type NewParticipantRow = Insertable<CallParticipantsTable>;
export type NewRecordingRow = Insertable<CallRecordingsTable>;
export type NewTranscriptionRow = Insertable<CallTranscriptionsTable>;
/**
 * A rejected record as callsync files it (transform/rejected-row.ts builds it): always with its run's
 * region. Required here so that no writer can leave it out: verify's repair filed region-less rows,
 * counted for no region and duplicated beside the sync's own.
 */
export type NewRejectedRow = Insertable<RejectedRecordsTable> & { region: string };
export type NewGroupMemberRow = Insertable<GroupMembersTable>;

/** One call as the transform makes it and the store writes it, in one transaction, whole. */
export interface CallRows {
  call: NewCallRow;
  payload: NewCallPayloadRow;
  participants: NewParticipantRow[];
  recordings: NewRecordingRow[];
  transcriptions: NewTranscriptionRow[];
}
