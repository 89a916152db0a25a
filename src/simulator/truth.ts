/**
 * Ground truth the simulator exposes to tests and benchmarks: what a perfect sync of one app must
 * end with. Values are in the normalised form callsync stores (minutes as numbers, unix seconds,
 * `deviceId` '' when the API gives none), so a test compares database rows against it directly.
 */
export type TruthRelation = 'participant_sum' | 'wall_clock' | 'mismatch' | 'incomplete';

export interface TruthParticipant {
  uid: string;
  deviceId: string; // '' when the participant never joined (API sends no deviceId)
  audioMinutes: number;
  videoMinutes: number;
  totalMinutes: number;
  isJoined: boolean;
  joinedAt: number | null;
  leftAt: number | null;
  state: string;
}

export interface TruthRecording {
  rid: string;
  durationMinutes: number | null;
  startTime: number | null;
  endTime: number | null;
  recordingUrl: string | null;
}

/** A JSON value as received (metaData, tags). */
export type TruthJson = null | boolean | number | string | TruthJson[] | { [key: string]: TruthJson };

/** One transcription of a call, as the service sends it (transcriptDate is ISO text). */
export interface TruthTranscription {
  tid: string;
  mid: string;
  roomName: string;
  startTime: number;
  endTime: number;
  transcriptDate: string;
  transcriptUrl: string;
}

export interface TruthCall {
  sessionId: string;
  /** null when the call arrives without `type` (detail quirk callsWithoutType). */
  type: string | null;
  mode: string;
  receiverType: string;
  receiver: string | null;
  initiator: string | null;
  /** null when the call arrives without `status` (detail quirk callsWithoutType). */
  status: string | null;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  totalDuration: string | null; // HH:MM:SS as sent
  totalParticipants: number;
  hasRecording: boolean;
  initiatedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  participants: TruthParticipant[];
  recordings: TruthRecording[];
  /** How the call-level totals relate to the participants (see issue 3's definition). */
  relation: TruthRelation;
  /** Codes of the checks this call fails on purpose, e.g. 'audio_plus_video_ne_total'. */
  issues: string[];
  // Present only under the transcriptions detail quirk (a sync then must store them as received);
  // absent, they are not checked.
  /** false when the call says false or nothing. */
  hasTranscription?: boolean;
  /** The transcriptions sent (at most 5, newest first). */
  transcriptions?: TruthTranscription[];
  /** metaData as received; null when absent. */
  metaData?: TruthJson;
  /** tags as received; null when absent. */
  tags?: TruthJson;
}

export interface AppTruth {
  appId: string;
  region: string;
  /** Calls a sync must store, keyed by sessionId (malformed and removed calls excluded; not-found calls
   * included, as stored from their list entry). */
  calls: Map<string, TruthCall>;
  /** Listed calls whose Get Call answers ERR_CALL_SESSION_NOT_FOUND: stored with not_found_at set. */
  notFound: Set<string>;
  /** Record keys (sessionId) of calls that are malformed in List and Get: must land in rejected_records. */
  malformed: Set<string>;
  /** Groups that received at least one group call, with their current members' uids. */
  groups: Map<string, string[]>;
  /**
   * Groups in `groups` that no longer exist (their member list answers ERR_GUID_NOT_FOUND); their
   * `groups` value is an empty array.
   */
  deletedGroups: Set<string>;
  /**
   * Calls that existed and then disappeared (removeWhilePaging): absent from `calls`, List and Get.
   * A client that stored them before they vanished keeps its rows; compare only calls in `calls`.
   */
  removed: Set<string>;
  /**
   * Calls (in `calls`, whole) whose Get Call has not answered properly yet (detail quirk
   * unusableGet): a sync cannot have their details, so it must say so (partial) until it has.
   */
  unusableDetail: Set<string>;
}
