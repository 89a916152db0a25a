import type { NonFinalStatus } from './generate-call.js';
import type { TruthCall, TruthParticipant, TruthRecording } from './truth.js';

/**
 * How a still-running call looks before it ends: no endedAt, zero totals, no recordings; in an
 * ongoing call those who had joined by `now` are in, without leftAt; in an initiated call nobody is.
 * Not-joined entries are deduplicated by uid because their deviceId is '' and (uid, deviceId) must
 * stay unique within a call.
 */
export function nonFinalSnapshot(final: TruthCall, status: NonFinalStatus, now: number): TruthCall {
  const participants: TruthParticipant[] = [];
  const present = new Set<string>();
  for (const p of final.participants) {
    if (status === 'ongoing' && p.isJoined && p.joinedAt !== null && p.joinedAt <= now) {
      participants.push({ ...p, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0, leftAt: null, state: 'ongoing' });
      present.add(p.uid);
    }
  }
  for (const p of final.participants) {
    if (present.has(p.uid)) continue;
    present.add(p.uid);
    participants.push({
      uid: p.uid,
      deviceId: '',
      audioMinutes: 0,
      videoMinutes: 0,
      totalMinutes: 0,
      isJoined: false,
      joinedAt: null,
      leftAt: null,
      state: 'unanswered',
    });
  }
  return {
    ...final,
    status,
    totalAudioMinutes: 0,
    totalVideoMinutes: 0,
    totalDurationMinutes: 0,
    totalDuration: '00:00:00',
    totalParticipants: participants.length,
    hasRecording: false,
    endedAt: null,
    participants,
    recordings: [],
    relation: 'incomplete',
    issues: [],
  };
}

/** The call with recordings that appeared later (advance({ addRecordings })). */
export function withLateRecordings(call: TruthCall, recordings: TruthRecording[]): TruthCall {
  return { ...call, hasRecording: true, recordings };
}
