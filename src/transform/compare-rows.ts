import type { NewCallRow, NewRecordingRow, NewTranscriptionRow } from '../store/schema.js';

/**
 * Two minute figures are the same when within this (6 ms): REAL columns round-trip exactly, but a
 * figure the service sends as "0.1" text and one stored from a number may differ in the last bit,
 * and answers rounded to 4 decimals one time and not the next differ by up to 5e-5 (at 1e-6 that
 * made old-call audits partial on 5 of 6 runs, and would make the settle audit ask for every call
 * of its window on every run: probe round 12, L1).
 */
export const MINUTES_EPSILON = 1e-4;

/** One uid on one device: how many participant entries, and their minutes summed. */
export interface ParticipantGroup {
  count: number;
  audio: number;
  video: number;
  total: number;
  /** The entries' is_joined, joined_at and left_at, sorted (empty when not asked for). */
  times: string;
}

export interface ParticipantLike {
  uid: string;
  device_id: string;
  total_audio_minutes?: number | null;
  total_video_minutes?: number | null;
  total_duration_minutes?: number | null;
  is_joined?: number;
  joined_at?: number | null;
  left_at?: number | null;
}

/**
 * Participant rows grouped by uid and device. Grouped, not compared row by row: the order of a
 * call's participants (their `seq`) may differ between List and Get answers without any change.
 * `withTimes`: also each entry's joined state and times (rows the transform made, not stored ones).
 */
export function groupParticipants(rows: Iterable<ParticipantLike>, withTimes = false): Map<string, ParticipantGroup> {
  const out = new Map<string, ParticipantGroup>();
  const times = new Map<string, string[]>();
  for (const p of rows) {
    const key = `${p.uid}\u0000${p.device_id}`;
    const g = out.get(key) ?? { count: 0, audio: 0, video: 0, total: 0, times: '' };
    g.count++;
    g.audio += p.total_audio_minutes ?? 0;
    g.video += p.total_video_minutes ?? 0;
    g.total += p.total_duration_minutes ?? 0;
    out.set(key, g);
    if (withTimes) times.set(key, [...(times.get(key) ?? []), `${p.is_joined ?? ''}/${p.joined_at ?? ''}/${p.left_at ?? ''}`]);
  }
  for (const [key, t] of times) out.get(key)!.times = t.sort().join(',');
  return out;
}

export function sameMinutes(a: number | null | undefined, b: number | null | undefined): boolean {
  if (a == null || b == null) return (a ?? null) === (b ?? null);
  return Math.abs(a - b) <= MINUTES_EPSILON;
}

export function sameGroups(a: Map<string, ParticipantGroup>, b: Map<string, ParticipantGroup>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, x] of a) {
    const y = b.get(key);
    if (!y || x.count !== y.count || x.times !== y.times || !sameMinutes(x.audio, y.audio) || !sameMinutes(x.video, y.video) || !sameMinutes(x.total, y.total)) return false;
  }
  return true;
}

/** The call columns two answers for one call must agree on (minutes within MINUTES_EPSILON). */
export const SAME_VALUE = ['type', 'mode', 'receiver_type', 'receiver', 'initiator', 'status', 'total_participants', 'has_recording', 'has_transcription', 'initiated_at', 'started_at', 'ended_at', 'total_duration_seconds'] as const;
export const SAME_MINUTES = ['total_audio_minutes', 'total_video_minutes', 'total_duration_minutes'] as const;

/**
 * What rowsDiffer compares of a call: the rows the transform makes (CallRows) or, read back, the
 * rows a database holds (store/settle-repo.ts).
 */
export interface ComparableRows {
  call: Pick<NewCallRow, (typeof SAME_VALUE)[number] | (typeof SAME_MINUTES)[number]>;
  participants: readonly ParticipantLike[];
  recordings: readonly Pick<NewRecordingRow, 'duration_minutes' | 'start_time' | 'end_time'>[];
  transcriptions: readonly Pick<NewTranscriptionRow, 'tid'>[];
}

/**
 * Where the rows of two answers for one call differ (column names, `participants`, `recordings`,
 * `transcriptions`; empty when they agree): what a list entry stored as listed would have got wrong
 * against Get Call's answer. Everything that reaches the tables is compared, but for payloads and
 * bookkeeping (source, fingerprints, sync times) and media URLs (a service may sign each answer's anew).
 */
export function rowsDiffer(a: ComparableRows, b: ComparableRows): string[] {
  const out: string[] = [];
  for (const k of SAME_VALUE) if ((a.call[k] ?? null) !== (b.call[k] ?? null)) out.push(k);
  for (const k of SAME_MINUTES) if (!sameMinutes(a.call[k], b.call[k])) out.push(k);
  if (!sameGroups(groupParticipants(a.participants, true), groupParticipants(b.participants, true))) out.push('participants');
  // Not by rid: a recording without one is keyed by its position, and the same recordings in another
  // order then looked like others (probe round 10, F5).
  // Sorted by times, then compared pairwise, durations within MINUTES_EPSILON (a duration rounded
  // one time and not the next made the settle audit ask for every call of its window: round 13, L1).
  const byTime = (r: ComparableRows): ComparableRows['recordings'] => [...r.recordings].sort((x, y) => (x.start_time ?? -1) - (y.start_time ?? -1) || (x.end_time ?? -1) - (y.end_time ?? -1) || (x.duration_minutes ?? -1) - (y.duration_minutes ?? -1));
  const ra = byTime(a);
  const rb = byTime(b);
  if (ra.length !== rb.length || ra.some((x, i) => x.start_time !== rb[i]!.start_time || x.end_time !== rb[i]!.end_time || !sameMinutes(x.duration_minutes, rb[i]!.duration_minutes))) out.push('recordings');
  const transcriptions = (r: ComparableRows): string => r.transcriptions.map((x) => x.tid).sort().join('\n');
  if (transcriptions(a) !== transcriptions(b)) out.push('transcriptions');
  return out;
}
