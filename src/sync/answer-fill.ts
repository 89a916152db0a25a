import type { ApiCall } from '../source/schemas.js';
import type { CallRows } from '../store/schema.js';
import { rowsToCompare } from '../transform/call-rows.js';
import { isFinalCall } from '../transform/call-status.js';
import { SAME_MINUTES, sameMinutes } from '../transform/compare-rows.js';
import type { MediaKind, MediaStatements, Silence } from './media-statements.js';

/**
 * What a Get Call answer leaves out, taken from an earlier statement of the same call: its list
 * entry, or the answer the database last stored of it. And when such a fill is no answer at all.
 */

/**
 * Get Call's answer, with the top-level fields it leaves out taken from `earlier` (its list entry, or
 * a stored answer): a detail view without `startedAt` or the call's minutes (a hostile fake) stored
 * NULL there, and billing then lost those calls' minutes. A field the answer has, even null, is the
 * answer's. Media the answer says the call has none of are not taken: `recordings` is only present
 * when `hasRecording` is true (api-facts), so an answer with `hasRecording: false` and no
 * `recordings` says they are gone (kept from the stored answer, deleted recordings stayed: probe
 * round 12, F2); the same for transcriptions, and for media `none` says the answer's silence states
 * there are none (see MediaStatements).
 */
export function withEarlierFields(earlier: ApiCall, got: ApiCall, none?: Readonly<Partial<Record<MediaKind, boolean>>>): ApiCall {
  const have = got as Record<string, unknown>;
  const had = earlier as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  // Nearly every answer has every field its entry has: then it is returned as it is (no copy per call).
  for (const k in had) {
    // "__proto__" as data (JSON.parse makes it an own key) would set the copy's prototype here.
    if (k === '__proto__' || have[k] !== undefined || had[k] === undefined) continue;
    // The SDK's single `recordingUrl` too: refilled, a deleted recording stayed stored, ok (helper-63).
    if (((k === 'recordings' || k === 'recordingUrl') && have.hasRecording === false) || (k === 'transcriptions' && have.hasTranscription === false)) continue;
    if (none?.recordings === true && (k === 'recordings' || k === 'recordingUrl' || k === 'hasRecording')) continue;
    if (none?.transcriptions === true && (k === 'transcriptions' || k === 'hasTranscription')) continue;
    (out ??= { ...have })[k] = had[k];
  }
  return (out ?? got) as ApiCall;
}

/** What `call`'s silence means for each kind of media `before` had (MediaStatements.silence). */
function mediaSilence(call: ApiCall, before: ApiCall, media: MediaStatements, listed: boolean): Partial<Record<MediaKind, Silence | undefined>> {
  const out: Partial<Record<MediaKind, Silence | undefined>> = {};
  if (before.recordings?.length || before.recordingUrl || before.hasRecording === true) out.recordings = media.silence(call, 'recordings', listed);
  if (before.transcriptions?.length || before.hasTranscription === true) out.transcriptions = media.silence(call, 'transcriptions', listed);
  return out;
}

/** The top-level fields `filled` has that the answer `got` left out (taken from an earlier statement). */
export function filledKeys(got: ApiCall, filled: ApiCall): string[] {
  const have = got as Record<string, unknown>;
  return Object.keys(filled).filter((k) => have[k] === undefined && (filled as Record<string, unknown>)[k] !== undefined);
}

/** Top-level fields an answer may leave out that a stored call's earlier answer can supply. */
const PARTS = ['participants', 'recordings', 'transcriptions', 'totalParticipants', 'startedAt', 'endedAt', 'totalAudioMinutes', 'totalVideoMinutes', 'totalDurationInMinutes', 'totalDuration', 'hasRecording'] as const;
/** Of PARTS, those that change until a call settles (startedAt does not). */
const SETTLING = PARTS.filter((k) => k !== 'startedAt');

/** Whether an answer leaves out any field a stored answer could supply (else none is read). */
export function lacksParts(call: ApiCall): boolean {
  const c = call as Record<string, unknown>;
  for (const k of PARTS) if (c[k] === undefined) return true;
  return false;
}

/** The same test as the unsettled pass's query (settle-repo listUnsettledCalls), on rows about to be written. */
export function looksUnsettled({ call: c, participants, recordings, transcriptions }: CallRows): boolean {
  if (c.is_final !== 1) return false;
  if ((c.has_recording === 1 && c.recording_rows === 0) || ((c.joined_devices ?? 0) > 0 && c.participant_total_minutes === 0) || c.ended_at == null) return true;
  if (c.total_participants != null && c.participant_rows < c.total_participants) return true;
  if ((c.has_transcription === 1 && transcriptions.length === 0) || recordings.some((r) => r.duration_minutes == null && r.start_time != null && r.end_time == null)) return true;
  return participants.some((p) => p.is_joined === 1 && (p.total_duration_minutes === 0 || p.total_duration_minutes == null));
}

/**
 * A recording or transcription stated without its file's URL yet: the unsettled pass's query asks
 * for such calls again too (listUnsettledCalls). Apart from looksUnsettled, which also decides that
 * a fill from the stored answer is provisional: a service that never states URLs would make every
 * such fill no answer.
 */
export function awaitsFiles({ recordings, transcriptions }: CallRows): boolean {
  return recordings.some((r) => !r.recording_url) || transcriptions.some((t) => !t.transcript_url);
}

/** The answer the database last stored of a call, read back. */
export interface StoredAnswer {
  call: ApiCall;
  /** Stored from its list entry because Get Call gave nothing usable (calls.detail_error): not an answer of Get Call. */
  lackedDetails: boolean;
  /** The payload is a list entry (details_source 'list': stored as listed, or kept after lackedDetails). */
  fromList?: boolean;
}

/**
 * `call` (an answer, with its list entry's fields) filled from the stored answer `before`;
 * undefined when that supplies nothing. `provisional`: what it supplies may no longer be what the
 * service holds, so the fill is no answer (the caller keeps the stored rows, the run is partial):
 * - `before` was of a live call: its minutes, participants and media were still growing (an ended
 *   call kept the live call's minutes, ok: round 12 F1);
 * - `before` is a list entry kept because Get Call failed, and it supplies participants, recordings
 *   or transcriptions, which the entry may carry fewer of than Get Call (a retried call kept 1 of 2
 *   recordings, ok: round 12 F3);
 * - the participants or recordings supplied look unfinished;
 * - participants are supplied while the answer states other call minutes than `before` did, or the
 *   call's minutes that agreed with the participants' sums in `before` and no longer agree with the
 *   participants the answer states: they belong to the old state (a refetch kept stale participant
 *   minutes under corrected call minutes, ok: round 12 F4; the settle audit the reverse, round 14 A1).
 */
export function fillFromStored(call: ApiCall, before: StoredAnswer, media?: MediaStatements, listed = false): { call: ApiCall; provisional: boolean } | undefined {
  const silence = media ? mediaSilence(call, before.call, media, listed) : {};
  const filled = withEarlierFields(before.call, call, { recordings: silence.recordings === 'none', transcriptions: silence.transcriptions === 'none' });
  // Stored media the answer and its entry are silent on, from a service that stated no media this run.
  if (silence.recordings === 'doubt' || silence.transcriptions === 'doubt') return { call: filled, provisional: true };
  if (filled === call) return undefined;
  const supplied = (k: string): boolean => (call as Record<string, unknown>)[k] === undefined && (filled as Record<string, unknown>)[k] !== undefined;
  if (!SETTLING.some(supplied)) return { call: filled, provisional: false };
  if (!isFinalCall(before.call)) return { call: filled, provisional: true };
  // A list entry states its own figures; only its lists may be short of Get Call's (a call kept 1 of 2
  // recordings, F3; its scalars made every run partial on complete data: round 13 F2).
  const lists = (['participants', 'recordings', 'transcriptions'] as const).some(supplied);
  if (before.lackedDetails) return { call: filled, provisional: lists };
  const minutes = (['totalAudioMinutes', 'totalVideoMinutes', 'totalDurationInMinutes', 'totalDuration'] as const).some(supplied);
  if (!supplied('participants') && !supplied('recordings') && !minutes) return { call: filled, provisional: false };
  const now = rowsToCompare(filled);
  if ((supplied('participants') || supplied('recordings')) && looksUnsettled(now)) return { call: filled, provisional: true };
  const then = rowsToCompare(before.call);
  // The call's minutes and its participants' go together: one supplied while the answer states the
  // other differently from `before` belongs to the old state.
  if (supplied('participants') && SAME_MINUTES.some((k) => !sameMinutes(now.call[k], then.call[k]))) return { call: filled, provisional: true };
  // The call's minutes supplied under other participants: provisional when they agreed with the
  // participants' sums before and no longer do (a participant settling late only comes to agree).
  const agree = (r: CallRows): boolean => sameMinutes(r.call.participant_audio_minutes, r.call.total_audio_minutes) && sameMinutes(r.call.participant_video_minutes, r.call.total_video_minutes);
  if (minutes && !supplied('participants') && agree(then) && !agree(now)) return { call: filled, provisional: true };
  return { call: filled, provisional: false };
}

/**
 * Get Call's record (`got`, as sent) with the top-level fields it leaves out taken from a list
 * entry that did not parse (`entry`, as sent), as withEarlierFields fills from a readable one: a
 * Get view without `mode` stored NULL there, though the entry stated it, ok (probe77 fuzz seed
 * 7008). `got` itself when it leaves nothing out the entry states, or either is no record. What
 * made the entry unreadable, left out by the answer, makes the merged record unreadable too.
 */
export function withUnreadableEntry(entry: unknown, got: unknown): unknown {
  const record = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!record(entry) || !record(got)) return got;
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(entry)) {
    if (k === '__proto__' || got[k] !== undefined || entry[k] === undefined) continue;
    if (((k === 'recordings' || k === 'recordingUrl') && got.hasRecording === false) || (k === 'transcriptions' && got.hasTranscription === false)) continue;
    (out ??= { ...got })[k] = entry[k];
  }
  return out ?? got;
}
