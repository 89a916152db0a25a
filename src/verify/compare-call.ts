import type { ApiCall } from '../source/schemas.js';
import type { CallRows } from '../store/schema.js';

/**
 * Two minute figures are the same when within this: REAL columns round-trip exactly, but a figure
 * the service sends as "0.1" text and one stored from a number may differ in the last bit.
 */
export const MINUTES_EPSILON = 1e-6;

/** The stored columns a list entry is compared with. */
export interface StoredCall {
  session_id: string;
  list_fingerprint: string | null;
  status: string | null;
  initiated_at: number | null;
  started_at: number | null;
  ended_at: number | null;
  total_audio_minutes: number | null;
  total_video_minutes: number | null;
  total_duration_minutes: number | null;
  total_participants: number | null;
  has_recording: number;
}

/** One uid on one device: how many participant entries, and their minutes summed. */
export interface ParticipantGroup {
  count: number;
  audio: number;
  video: number;
  total: number;
}

/** A stored call's participants (by uid and device) and its number of recordings. */
export interface StoredChildren {
  participants: Map<string, ParticipantGroup>;
  recordings: number;
}

interface ParticipantLike {
  uid: string;
  device_id: string;
  total_audio_minutes?: number | null;
  total_video_minutes?: number | null;
  total_duration_minutes?: number | null;
}

/**
 * Participant rows grouped by uid and device. Grouped, not compared row by row: the order of a
 * call's participants (their `seq`) may differ between List and Get answers without any change.
 */
export function groupParticipants(rows: Iterable<ParticipantLike>): Map<string, ParticipantGroup> {
  const out = new Map<string, ParticipantGroup>();
  for (const p of rows) {
    const key = `${p.uid}\u0000${p.device_id}`;
    const g = out.get(key) ?? { count: 0, audio: 0, video: 0, total: 0 };
    g.count++;
    g.audio += p.total_audio_minutes ?? 0;
    g.video += p.total_video_minutes ?? 0;
    g.total += p.total_duration_minutes ?? 0;
    out.set(key, g);
  }
  return out;
}

function sameMinutes(a: number | null, b: number | null): boolean {
  if (a === null || b === null) return a === b;
  return Math.abs(a - b) <= MINUTES_EPSILON;
}

/**
 * Whether the entry's participants can be compared: it carries them, and not fewer than its
 * `totalParticipants` (fewer may be a list that left some out, which sync completes with Get Call;
 * the same rule as listEntryIsComplete).
 */
export function carriesParticipants(call: ApiCall): boolean {
  if (!Array.isArray(call.participants)) return false;
  return call.totalParticipants == null || call.participants.length >= call.totalParticipants;
}

/** Whether the entry's recordings can be compared: it carries some, or says there are none. */
export function carriesRecordings(call: ApiCall, rows: CallRows): boolean {
  if (rows.recordings.length > 0) return true;
  return Array.isArray(call.recordings) && call.hasRecording !== true;
}

/**
 * The stored fields that differ from what the list entry says (column names; empty when it agrees).
 * A field the entry does not carry says nothing and is not compared: a List entry may omit what
 * Get Call supplied. The entry goes through the same transform as sync (`rows`), so a value sync
 * would store differently (a startedAt of 0 meaning "never started", say) compares as sync stores it.
 */
export function callDifferences(call: ApiCall, rows: CallRows, stored: StoredCall, children: StoredChildren | undefined): string[] {
  const out: string[] = [];
  const c = rows.call;
  if (c.status !== stored.status) out.push('status');
  const times = [
    ['initiated_at', call.initiatedAt, c.initiated_at ?? null, stored.initiated_at],
    ['started_at', call.startedAt, c.started_at ?? null, stored.started_at],
    ['ended_at', call.endedAt, c.ended_at ?? null, stored.ended_at],
  ] as const;
  for (const [name, carried, listed, have] of times) if (carried !== undefined && listed !== have) out.push(name);
  const minutes = [
    ['total_audio_minutes', call.totalAudioMinutes, c.total_audio_minutes ?? null, stored.total_audio_minutes],
    ['total_video_minutes', call.totalVideoMinutes, c.total_video_minutes ?? null, stored.total_video_minutes],
    ['total_duration_minutes', call.totalDurationInMinutes, c.total_duration_minutes ?? null, stored.total_duration_minutes],
  ] as const;
  for (const [name, carried, listed, have] of minutes) if (carried !== undefined && !sameMinutes(listed, have)) out.push(name);
  if (call.totalParticipants !== undefined && (c.total_participants ?? null) !== stored.total_participants) out.push('total_participants');
  if ((call.hasRecording !== undefined || call.recordings != null || call.recordingUrl != null) && c.has_recording !== stored.has_recording) out.push('has_recording');
  if (children && carriesParticipants(call) && !sameGroups(groupParticipants(rows.participants), children.participants)) out.push('participants');
  if (children && carriesRecordings(call, rows) && rows.recordings.length !== children.recordings) out.push('recordings');
  return out;
}

function sameGroups(a: Map<string, ParticipantGroup>, b: Map<string, ParticipantGroup>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, x] of a) {
    const y = b.get(key);
    if (!y || x.count !== y.count || !sameMinutes(x.audio, y.audio) || !sameMinutes(x.video, y.video) || !sameMinutes(x.total, y.total)) return false;
  }
  return true;
}
