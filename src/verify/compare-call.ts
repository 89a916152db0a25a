import type { ApiCall } from '../source/schemas.js';
import type { CallRows } from '../store/schema.js';
import { groupParticipants, sameGroups, sameMinutes, type ParticipantGroup } from '../transform/compare-rows.js';

/** The stored columns a list entry is compared with. */
export interface StoredCall {
  session_id: string;
  list_fingerprint: string | null;
  type: string | null;
  mode: string | null;
  receiver_type: string | null;
  receiver: string | null;
  initiator: string | null;
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

/** A stored call's participants (by uid and device) and its number of recordings. */
export interface StoredChildren {
  participants: Map<string, ParticipantGroup>;
  recordings: number;
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
  // What a call is and between whom, too: billing groups by type, so a call turned from audio to
  // video moved its minutes between rows while verify said OK (probe round 17 b, F3).
  const parties = [
    ['type', call.type, c.type ?? null, stored.type],
    ['mode', call.mode, c.mode ?? null, stored.mode],
    ['receiver_type', call.receiverType, c.receiver_type ?? null, stored.receiver_type],
    ['receiver', call.receiver, c.receiver ?? null, stored.receiver],
    ['initiator', call.initiator, c.initiator ?? null, stored.initiator],
  ] as const;
  for (const [name, carried, listed, have] of parties) if (carried !== undefined && listed !== have) out.push(name);
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
