import type { ApiCall } from '../source/schemas.js';
import { deviceIdOf, distinctParticipantEntries, distinctParticipants, saysJoined } from '../transform/call-rows.js';
import { isFinalCall } from '../transform/call-status.js';

/** Recordings and transcriptions a call states (the SDK's single `recordingUrl` is one recording). */
export function mediaOf(call: ApiCall): { recordings: number; transcriptions: number } {
  return { recordings: call.recordings?.length ?? (call.recordingUrl ? 1 : 0), transcriptions: call.transcriptions?.length ?? 0 };
}

/**
 * Why Get Call's answer is an older state of the call than its list entry, if it is: the entry
 * already says the call ended, has recordings, or shows participants, recordings or transcriptions
 * the answer lacks. A replica or cache behind Get Call that lags the listing answers like that;
 * stored, the answer sat under the entry's fingerprint and was never asked for again (a hostile
 * fake lost 90 of 120 recordings that way, ok, also after `sync --full`). Such an answer is
 * treated as unusable: the call is kept as listed and asked for again on the next runs.
 */
export function olderThanListed(listed: ApiCall, got: ApiCall): string | undefined {
  if (isFinalCall(listed) && !isFinalCall(got)) return `the list entry says ${listed.status ?? 'ended'}, Get Call ${got.status ?? 'not ended'}`;
  if (listed.endedAt != null && got.endedAt == null) return 'the list entry has endedAt, Get Call has none';
  if (listed.hasRecording === true && got.hasRecording === false) return 'the list entry says hasRecording, Get Call does not';
  const l = mediaOf(listed);
  const g = mediaOf(got);
  if (g.recordings < l.recordings) return `the list entry has ${l.recordings} recording(s), Get Call ${g.recordings}`;
  if (g.transcriptions < l.transcriptions) return `the list entry has ${l.transcriptions} transcription(s), Get Call ${g.transcriptions}`;
  // An entry the list repeats exactly is one participant (see listEntryIsComplete); counted only
  // when the answer has fewer entries than the list, as almost never. Nor are people invited who
  // never joined (no minutes): a Get Call showing only those who joined was an "older state" on
  // every call with an invitee, and every run partial (session 29's probe).
  const gp = got.participants?.length ?? 0;
  if (gp < (listed.participants?.length ?? 0)) {
    const lp = distinctParticipantEntries(listed);
    const lj = joinedEntries(listed);
    if (gp < lp && joinedEntries(got) < lj) return `the list entry has ${lp} participant(s) (${lj} who joined), Get Call ${gp}`;
  }
  // A participant the entry states minutes for, at zero in the answer: the answer was read before
  // they were counted. Stored, the entry's minutes were lost for good on a call past settleDays,
  // ok, also after `sync --full` (probe round 17 c).
  const zeroed = zeroedParticipant(listed, got);
  if (zeroed !== undefined) return `the list entry gives participant ${JSON.stringify(zeroed.slice(0, 80))} minutes, Get Call none`;
  return undefined;
}

/** Participant entries (exact repeats once) of people who joined: said so, or with minutes. */
function joinedEntries(call: ApiCall): number {
  let n = 0;
  for (const p of distinctParticipants(call.participants ?? [])) if (saysJoined(p) || (minutesOf(p) ?? 0) > 0) n++;
  return n;
}

/** A participant's minutes as the entry states them (the larger of its total and audio + video), or undefined when it states none. */
function minutesOf(p: NonNullable<ApiCall['participants']>[number]): number | undefined {
  const parts = [p.totalAudioMinutes, p.totalVideoMinutes].filter((v): v is number => typeof v === 'number');
  const total = typeof p.totalDuration === 'number' ? p.totalDuration : p.totalDurationInMinutes ?? undefined;
  if (parts.length === 0 && (total === undefined || total === null)) return undefined;
  return Math.max(parts.reduce((a, b) => a + b, 0), total ?? 0);
}

/** The uid of a participant with minutes in the entry and stated at zero by the answer, if any. */
function zeroedParticipant(listed: ApiCall, got: ApiCall): string | undefined {
  if (!listed.participants?.length || !got.participants?.length) return undefined;
  const key = (p: NonNullable<ApiCall['participants']>[number]): string => `${p.uid ?? ''}\u0000${deviceIdOf(p)}`;
  const answered = new Map<string, number>();
  for (const p of got.participants) {
    const m = minutesOf(p);
    if (m !== undefined) answered.set(key(p), Math.max(answered.get(key(p)) ?? 0, m));
  }
  for (const p of listed.participants) {
    const m = minutesOf(p);
    if (m !== undefined && m > 0 && answered.get(key(p)) === 0) return p.uid ?? '';
  }
  return undefined;
}

/**
 * Why a call to be stored from Get Call cannot be: it counts participants (`totalParticipants`,
 * or minutes) and neither the answer, nor its list entry, nor an earlier answer states who they
 * were. Stored, its participant rows were none and the run said ok (probe77: a list of minimal
 * entries beside a Get view without `participants`, every call of every run). `[]` is a statement.
 */
export function participantsUnstated(call: ApiCall): string | undefined {
  if (call.participants != null) return undefined;
  const minutes = (call.totalAudioMinutes ?? 0) + (call.totalVideoMinutes ?? 0);
  if ((call.totalParticipants ?? 0) <= 0 && !(minutes > 0)) return undefined;
  return `neither Get Call nor the list entry states the participants of a call with ${call.totalParticipants ?? 'no'} participant(s) counted and ${minutes} minute(s)`;
}

/**
 * Why a final call that started cannot be stored from Get Call: its audio or video minutes are
 * stated by neither the answer, nor its list entry, nor an earlier answer (minimal entries beside a
 * Get view without `totalAudioMinutes`: NULL minutes, ok, probe77 fuzz seed 7141). A call that
 * never started (no participant with minutes either) or is still live may state none.
 */
export function callMinutesUnstated(call: ApiCall): string | undefined {
  const left = (['totalAudioMinutes', 'totalVideoMinutes'] as const).filter((k) => call[k] == null);
  if (left.length === 0 || !isFinalCall(call)) return undefined;
  const participantMinutes = (call.participants ?? []).some((p) => (minutesOf(p) ?? 0) > 0);
  if (call.startedAt == null && !participantMinutes) return undefined;
  return `neither Get Call nor the list entry states the call's ${left.join(' or ')} of a call that ${call.startedAt == null ? 'has participant minutes' : 'started'}`;
}

/** Why a call to be stored from Get Call cannot be, for what nothing states (participants, minutes). */
export function partsUnstated(call: ApiCall): string | undefined {
  return participantsUnstated(call) ?? callMinutesUnstated(call);
}
