import { hash } from 'node:crypto';
import { describeZodError, ApiCallSchema, type ApiCall, type ApiParticipant } from '../source/schemas.js';
import { fastParseCall } from '../source/record-fastpath.js';
import type { CallRows, NewCallRow, NewParticipantRow, NewRecordingRow, NewTranscriptionRow } from '../store/schema.js';
import { isFinalCall, receiverTypeForm } from './call-status.js';
import { parseTimer } from './duration.js';
import { deviceIdOf, distinctParticipantEntries, distinctParticipants, saysJoined, sessionStatedTwice } from './participant-entries.js';

export { deviceIdOf, distinctParticipantEntries, distinctParticipants, saysJoined, sessionStatedTwice } from './participant-entries.js';

export interface CallRowContext {
  appId: string;
  region: string;
  /** Unix seconds of this sync: passed in, so the transform stays pure. */
  now: number;
  source: 'list' | 'detail';
  listFingerprint: string | null;
  notFoundAt?: number | null;
  /** `JSON.stringify(raw)` when the caller already has it (it hashed the same payload): not serialised twice. */
  rawJson?: string;
  /** Why Get Call could not supply the details (the call is stored from its list entry). */
  detailError?: string | null;
}

export type ParsedCall = { ok: true; call: ApiCall } | { ok: false; key: string; reason: string };

/** Stable hash of a raw record: equal payloads give equal fingerprints. */
export function fingerprint(raw: unknown): string {
  return fingerprintJson(JSON.stringify(raw) ?? 'undefined');
}

/**
 * `fingerprint(raw)` from `JSON.stringify(raw)`, for callers that also store that text. The stored
 * `list_fingerprint`s depend on this exact function (SHA-1, base64url of the JSON text): changing it
 * would make every stored call look changed once.
 */
export function fingerprintJson(json: string): string {
  // crypto.hash (Node >= 20.12) is the one-shot form of createHash().update().digest(): same bytes, no Hash object.
  return hash('sha1', json, 'base64url');
}

/**
 * A key to file a rejected record under: its sessionId when it has one that is a string (escaped as
 * in JSON when it holds a lone surrogate, which SQLite would otherwise turn into U+FFFD).
 */
export function recordKey(raw: unknown, fallback: string): string {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const id = (raw as Record<string, unknown>).sessionId;
    if (typeof id === 'string' && id.length > 0) return (id.isWellFormed() ? id : JSON.stringify(id).slice(1, -1)).slice(0, 500);
  }
  return fallback;
}

/** Validates one raw call record. Never throws: any input gives a call or a reason. */
export function parseCall(raw: unknown, fallbackKey: string): ParsedCall {
  try {
    // Plain records (nearly all) are decided without zod; the rest, and every rejection, by zod.
    const fast = fastParseCall(raw);
    if (fast !== undefined) return { ok: true, call: fast };
    const r = ApiCallSchema.safeParse(raw);
    if (r.success) return { ok: true, call: r.data };
    return { ok: false, key: recordKey(raw, fallbackKey), reason: describeZodError(r.error) };
  } catch (err) {
    return { ok: false, key: recordKey(raw, fallbackKey), reason: `unparseable: ${(err as Error).message}`.slice(0, 300) };
  }
}

function refId(ref: ApiCall['initiator']): string | null {
  if (ref == null) return null;
  if (typeof ref === 'string') return ref;
  return ref.uid ?? ref.guid ?? ref.id ?? null;
}

/** The call's receiver uid/guid, from any of its documented shapes. */
export function receiverOf(call: ApiCall): string | null {
  return refId(call.receiver) ?? refId(call.entities?.receiver?.entity);
}

/** The call's initiator uid, from any of its documented shapes. */
export function initiatorOf(call: ApiCall): string | null {
  return refId(call.initiator) ?? refId(call.entities?.initiator?.entity);
}


/** Participant minutes: `totalDurationInMinutes` (overview, legacy) or `totalDuration` (current examples). */
export function participantTotalMinutes(p: ApiParticipant): number | null {
  if (p.totalDurationInMinutes !== undefined && p.totalDurationInMinutes !== null) return p.totalDurationInMinutes;
  if (typeof p.totalDuration === 'number') return p.totalDuration;
  if (typeof p.totalDuration === 'string') {
    const s = parseTimer(p.totalDuration);
    if (s !== null) return s / 60;
  }
  if (p.totalAudioMinutes !== undefined || p.totalVideoMinutes !== undefined) {
    return (p.totalAudioMinutes ?? 0) + (p.totalVideoMinutes ?? 0);
  }
  return null;
}

function recordingRows(call: ApiCall, appId: string): NewRecordingRow[] {
  const byRid = new Map<string, NewRecordingRow>();
  const unnamed = new Set<string>();
  (call.recordings ?? []).forEach((r, i) => {
    const named = r.rid != null && String(r.rid) !== '';
    keepOnce(byRid, named ? String(r.rid) : `${call.sessionId}:${i}`, 'recording_url', named ? undefined : unnamed, (key) => ({
      app_id: appId, session_id: call.sessionId, rid: key, duration_minutes: r.duration ?? null,
      start_time: r.startTime ?? null, end_time: r.endTime ?? null, recording_url: r.recording_url ?? null,
    }));
  });
  if (byRid.size === 0 && call.recordingUrl) {
    // One SDK page has a single recordingUrl on the call instead of the recordings array.
    const rid = `${call.sessionId}:recordingUrl`;
    byRid.set(rid, { app_id: appId, session_id: call.sessionId, rid, duration_minutes: null, start_time: null, end_time: null, recording_url: call.recordingUrl });
  }
  return [...byRid.values()];
}

function transcriptionRows(call: ApiCall, appId: string): NewTranscriptionRow[] {
  const byTid = new Map<string, NewTranscriptionRow>();
  const unnamed = new Set<string>();
  (call.transcriptions ?? []).forEach((t, i) => {
    const named = t.tid != null && String(t.tid) !== '';
    keepOnce(byTid, named ? String(t.tid) : `${call.sessionId}:${i}`, 'transcript_url', named ? undefined : unnamed, (key) => ({
      app_id: appId, session_id: call.sessionId, tid: key, mid: t.mid ?? null, room_name: t.roomName ?? null,
      start_time: t.startTime ?? null, end_time: t.endTime ?? null, transcript_date: t.transcriptDate ?? null, transcript_url: t.transcriptUrl ?? null,
    }));
  });
  return [...byTid.values()];
}

/**
 * Adds the row `make(id)` under `id`: the same recording (or transcription) listed twice is kept
 * once, but a different one under an id already taken (parts of a recording sharing its rid) is
 * kept too, as `id#2`, `id#3`…: keyed by id alone, the second replaced the first (a hostile fake:
 * 23 of 46 recordings, half their minutes, lost, ok). Its URL's query (`url`) is no part of what it
 * is: a service signs each URL anew, and a recording repeated with two signatures was stored twice,
 * its minutes counted twice, ok (session 29's probe). `unnamed`: the contents kept so far of
 * rows whose id is a stand-in (see below).
 */
function keepOnce<R extends object>(rows: Map<string, R>, id: string, url: keyof R, unnamed: Set<string> | undefined, make: (key: string) => R): void {
  const row = make('');
  // The URL without its query (the signature): another path is another file (.mp4 and .m4a, helper-63).
  const u = row[url];
  const content = JSON.stringify({ ...row, [url]: typeof u === 'string' ? u.split('?')[0] : u });
  // Without an id of its own (`unnamed`: the id is a stand-in, `<sessionId>:<index>`), each copy
  // had a key of its own, so a file stated twice was stored twice, its minutes counted twice, ok
  // (probe69): copies are told apart by content alone. The stand-in keeps its index, so an answer
  // without copies keeps the keys it was stored under.
  if (unnamed) {
    if (unnamed.has(content)) return;
    unnamed.add(content);
  }
  for (let n = 1; ; n++) {
    const key = n === 1 ? id : `${id}#${n}`;
    const taken = rows.get(key);
    if (taken === undefined) {
      const row = make(key);
      contentOf.set(row, content);
      rows.set(key, row);
      return;
    }
    if (contentOf.get(taken) === content) return;
  }
}

/** A kept row's content without its id (keepOnce compares by it). */
const contentOf = new WeakMap<object, string>();

/** Free-form JSON the service sends (metaData, tags), kept as text; NULL when absent. */
function jsonText(v: unknown): string | null {
  return v === undefined || v === null ? null : (JSON.stringify(v) ?? null);
}

/**
 * The UTC day (`length` 10: 'YYYY-MM-DD') or month (7: 'YYYY-MM') of unix seconds, as SQLite's
 * date(x, 'unixepoch') and strftime('%Y-%m', …) give it (the migration fills stored calls with
 * those): NULL outside the years 0000–9999, where SQLite gives NULL too.
 */
export function utcPeriod(sec: number | null | undefined, length: 7 | 10): string | null {
  if (sec == null || !Number.isFinite(sec)) return null;
  const ms = Math.floor(sec) * 1000;
  if (ms < MIN_PERIOD_MS || ms >= MAX_PERIOD_MS) return null;
  // A sync writes calls in time order, so consecutive calls mostly share a day: its texts are
  // kept rather than formatted twice per call (Date + toISOString was ~1.5 µs a call).
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayText = new Date(day * DAY_MS).toISOString().slice(0, 10);
    lastMonthText = lastDayText.slice(0, 7);
  }
  return length === 10 ? lastDayText : lastMonthText;
}

const DAY_MS = 86_400_000;
let lastDay = NaN;
let lastDayText = '';
let lastMonthText = '';

/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z: the years a period text has four digits for. */
const MIN_PERIOD_MS = Date.parse('0000-01-01T00:00:00Z');
const MAX_PERIOD_MS = Date.UTC(10000, 0, 1);

/**
 * A call's rows made only to compare them with other rows (rowsDiffer, looksUnsettled): no app,
 * time or payload, which no comparison reads.
 */
export function rowsToCompare(call: ApiCall): CallRows {
  return apiCallToRows(call, undefined, { appId: '', region: '', now: 0, source: 'detail', listFingerprint: null, rawJson: '' });
}

/** Converts a validated API call into its rows. Pure: no I/O, no clock. */
export function apiCallToRows(call: ApiCall, raw: unknown, ctx: CallRowContext): CallRows {
  const timer = typeof call.totalDuration === 'string' ? call.totalDuration : call.totalDuration != null ? String(call.totalDuration) : null;
  const recordings = recordingRows(call, ctx.appId);
  const transcriptions = transcriptionRows(call, ctx.appId);
  // An entry repeated exactly (same user, device, times and minutes) is one session stated twice,
  // as the list side reads it (listEntryIsComplete): stored twice, Get Call's repeat doubled that
  // participant's minutes, ok (hostile probe, session 28). The payload keeps the answer as sent.
  const participants = distinctParticipants(call.participants ?? []).map(
    (p, seq): NewParticipantRow => ({
      app_id: ctx.appId,
      session_id: call.sessionId,
      seq,
      uid: p.uid ?? '',
      device_id: deviceIdOf(p),
      total_audio_minutes: p.totalAudioMinutes ?? null,
      total_video_minutes: p.totalVideoMinutes ?? null,
      total_duration_minutes: participantTotalMinutes(p),
      is_joined: saysJoined(p) ? 1 : 0,
      joined_at: p.joinedAt ?? null,
      left_at: p.leftAt ?? null,
      state: p.state ?? null,
    }),
  );
  // The aggregates are assigned one by one: an object literal that starts with a spread and goes on
  // with 30 more properties made V8 build each row the slow way (~60 µs a call, most of the CPU of
  // apiCallToRows); this literal has a fixed shape.
  const agg = participantAggregates(participants, call.startedAt ?? null, call.endedAt ?? null);
  const day = utcPeriod(call.startedAt, 10);
  return {
    call: {
      participant_rows: agg.participant_rows,
      joined_devices: agg.joined_devices,
      joined_users: agg.joined_users,
      participant_audio_minutes: agg.participant_audio_minutes,
      participant_video_minutes: agg.participant_video_minutes,
      participant_total_minutes: agg.participant_total_minutes,
      participant_outside_rows: agg.participant_outside_rows,
      participant_missing_uid_rows: agg.participant_missing_uid_rows,
      participant_negative_rows: agg.participant_negative_rows,
      participant_max_minutes: agg.participant_max_minutes,
      participant_span_minutes: agg.participant_span_minutes,
      recording_minutes: recordings.reduce((sum, r) => sum + (r.duration_minutes ?? 0), 0),
      recording_rows: recordings.length,
      app_id: ctx.appId,
      region: ctx.region,
      session_id: call.sessionId,
      type: call.type ?? null,
      mode: call.mode ?? null,
      receiver_type: receiverTypeForm(call.receiverType),
      receiver: receiverOf(call),
      initiator: initiatorOf(call),
      status: call.status != null && call.status.trim() !== '' ? call.status : null,
      is_final: isFinalCall(call) ? 1 : 0,
      total_audio_minutes: call.totalAudioMinutes ?? null,
      total_video_minutes: call.totalVideoMinutes ?? null,
      // The docs define it as audio + video: a call stating those and not it has that total, not none
      // (read as 0, its month's call-level total was 0 beside its user-minutes: helper-64 F4).
      total_duration_minutes: call.totalDurationInMinutes ?? (call.totalAudioMinutes != null && call.totalVideoMinutes != null ? call.totalAudioMinutes + call.totalVideoMinutes : null),
      total_duration: timer,
      total_duration_seconds: parseTimer(timer),
      total_participants: call.totalParticipants != null ? Math.round(call.totalParticipants) : null,
      has_recording: (call.hasRecording ?? recordings.length > 0) ? 1 : 0,
      initiated_at: call.initiatedAt ?? null,
      started_at: call.startedAt ?? null,
      ended_at: call.endedAt ?? null,
      details_source: ctx.source,
      list_fingerprint: ctx.listFingerprint,
      not_found_at: ctx.notFoundAt ?? null,
      first_synced_at: ctx.now,
      synced_at: ctx.now,
      detail_error: ctx.detailError ?? null,
      has_transcription: (call.hasTranscription ?? transcriptions.length > 0) ? 1 : 0,
      metadata_json: jsonText(call.metaData),
      tags_json: jsonText(call.tags),
      stale_at: null,
      started_day: day,
      // The day's first seven characters: utcPeriod(startedAt, 7) without a second Date.
      started_month: day === null ? null : day.slice(0, 7),
    },
    payload: { app_id: ctx.appId, session_id: call.sessionId, raw_json: ctx.rawJson ?? JSON.stringify(raw) },
    participants,
    recordings,
    transcriptions,
  };
}

/** Sums over a call's participant rows, stored on the call so reports need not re-aggregate. */
export function participantAggregates(
  rows: readonly NewParticipantRow[],
  startedAt: number | null,
  endedAt: number | null,
): Pick<
  NewCallRow,
  | 'participant_rows' | 'joined_devices' | 'joined_users' | 'participant_audio_minutes' | 'participant_video_minutes' | 'participant_total_minutes'
  | 'participant_outside_rows' | 'participant_missing_uid_rows' | 'participant_negative_rows' | 'participant_max_minutes'
  | 'participant_span_minutes'
> {
  let missingUid = 0;
  let negative = 0;
  let max: number | null = null;
  let audio = 0;
  let video = 0;
  let total = 0;
  let joined = 0;
  let outside = 0;
  // The span the entries' own times show: a bound for a final call whose wall clock is unknown or
  // negative (no end, or an end before its start), which the view otherwise could not check.
  let firstJoin: number | null = null;
  let lastLeave: number | null = null;
  const users = new Set<string>();
  for (const p of rows) {
    audio += p.total_audio_minutes ?? 0;
    video += p.total_video_minutes ?? 0;
    total += p.total_duration_minutes ?? 0;
    if (p.uid === '') missingUid++;
    if ((p.total_audio_minutes ?? 0) < 0 || (p.total_video_minutes ?? 0) < 0 || (p.total_duration_minutes ?? 0) < 0) negative++;
    if (p.total_duration_minutes != null && (max === null || p.total_duration_minutes > max)) max = p.total_duration_minutes;
    if (p.joined_at != null && (firstJoin === null || p.joined_at < firstJoin)) firstJoin = p.joined_at;
    if (p.left_at != null && (lastLeave === null || p.left_at > lastLeave)) lastLeave = p.left_at;
    if (p.is_joined === 1) {
      joined++;
      users.add(p.uid);
    }
    if (startedAt !== null && endedAt !== null) {
      const j = p.joined_at ?? null;
      const l = p.left_at ?? null;
      if ((j !== null && (j < startedAt || j > endedAt)) || (l !== null && (l > endedAt || l < startedAt))) outside++;
    }
  }
  return {
    participant_rows: rows.length,
    joined_devices: joined,
    joined_users: users.size,
    participant_audio_minutes: audio,
    participant_video_minutes: video,
    participant_total_minutes: total,
    participant_outside_rows: outside,
    participant_missing_uid_rows: missingUid,
    participant_negative_rows: negative,
    participant_max_minutes: max,
    participant_span_minutes: firstJoin === null || lastLeave === null ? null : (lastLeave - firstJoin) / 60,
  };
}

/**
 * Whether a List Calls entry is the whole call (detailFetch "auto"), so Get Call can be skipped.
 * A list entry "can include" participants (api-facts.md): only an entry that visibly carries
 * everything is trusted, since a summary list that leaves minutes out must cost requests, not
 * minutes. Complete means: final; the call-level totals present; participants present, at least
 * as many as `totalParticipants`, each with its audio and video minutes and its total (either
 * spelling); its kind and parties (type, mode, receiverType, receiver, initiator) stated; whether it
 * has recordings stated, and recordings present when `hasRecording`, transcriptions when
 * `hasTranscription`. What such an entry still gets wrong is found by the audit (sync/list-audit.ts).
 *
 * More participant entries than `totalParticipants` cannot be a list that left some out (Get Call
 * answers the same participants; reconciliation reports the count), so that alone costs nothing.
 */
export function listEntryIsComplete(call: ApiCall): boolean {
  if (!isFinalCall(call) || call.status == null) return false;
  if (call.totalAudioMinutes == null || call.totalVideoMinutes == null || (call.totalDurationInMinutes == null && call.totalDuration == null)) return false;
  if (!Array.isArray(call.participants)) return false;
  if (call.totalParticipants == null || call.participants.length < call.totalParticipants) return false;
  for (const p of call.participants) {
    if (p.totalAudioMinutes === undefined || p.totalVideoMinutes === undefined) return false;
    if (p.totalDuration === undefined && p.totalDurationInMinutes === undefined) return false;
  }
  // An entry repeated exactly is not two sessions: a list entry repeating one inflated the call's
  // user-minutes, ok (probe round 9, F3). Get Call decides.
  if (call.participants.length > 1 && distinctParticipantEntries(call) < call.participants.length) return false;
  // One session stated twice, differently: which statement holds is Get Call's to say (see sessionStatedTwice).
  if (call.participants.length > 1 && sessionStatedTwice(call.participants) !== undefined) return false;
  // What an entry leaves unsaid is not known to be absent (the list's fields are not documented): an
  // entry with neither hasRecording nor recordings lost every recording as listed, and one without
  // its kind or parties stored NULLs there, its group call unseen, so the group's members were never
  // synced (a hostile fake, round 8: both ok).
  if (call.hasRecording == null && call.recordings == null && call.recordingUrl == null) return false;
  if (call.type == null || call.mode == null || call.receiverType == null || receiverOf(call) === null || initiatorOf(call) === null) return false;
  if (call.hasRecording && !(call.recordings?.length || call.recordingUrl)) return false;
  if (call.hasTranscription && !call.transcriptions?.length) return false;
  return true;
}


/** Time used to order and window calls: startedAt, else initiatedAt, else endedAt. */
export function callTime(call: ApiCall): number | null {
  return call.startedAt ?? call.initiatedAt ?? call.endedAt ?? null;
}
