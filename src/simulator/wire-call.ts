import type { WireVariant } from './generate-call.js';
import { displayName } from './groups.js';
import type { TruthCall, TruthParticipant, TruthRecording } from './truth.js';

export type WireObject = Record<string, unknown>;

/** Undocumented nesting a client must carry through untouched (raw payload storage). */
const EXTRA_NESTED = { a: { b: { c: [1, 2] } } };

function entity(id: string, group: boolean): WireObject {
  return group ? { guid: id, name: displayName(id) } : { uid: id, name: displayName(id) };
}

function wireParticipant(p: TruthParticipant, v: WireVariant, position: number): WireObject {
  const o: WireObject = {
    uid: p.uid,
    totalAudioMinutes: p.audioMinutes,
    totalVideoMinutes: p.videoMinutes,
    [v.participantTotalKey]: p.totalMinutes,
  };
  // A participant that never joined has no deviceId, joinedAt, leftAt or mid (api-facts.md).
  if (p.deviceId !== '') o[v.sdkSpelling ? 'deviceID' : 'deviceId'] = v.deviceIdInteger ? Number(p.deviceId) : p.deviceId;
  o[v.sdkSpelling ? 'hasJoined' : 'isJoined'] = p.isJoined;
  if (p.joinedAt !== null) o.joinedAt = p.joinedAt;
  if (p.leftAt !== null) o.leftAt = p.leftAt;
  o.state = p.state;
  if (p.isJoined && v.participantMid) o.mid = `${v.callMid.slice(0, 23)}-${position.toString(16).padStart(12, '0')}`;
  if (v.participantProfile) {
    o.name = displayName(p.uid);
    o.avatar = `https://data-us.cometchat.io/assets/images/avatars/${p.uid}.webp`;
  }
  return o;
}

function isUrlVariant(call: TruthCall, recordings: readonly TruthRecording[]): boolean {
  const only = recordings[0];
  return recordings.length === 1 && only !== undefined && only.rid === `${call.sessionId}:recordingUrl`;
}

/**
 * The call as the API sends it, in the variant's spelling. `omitParticipants` drops the array
 * (List entries that force a Get Call, and calls whose Get answers not-found).
 */
export function toWireCall(call: TruthCall, v: WireVariant, omitParticipants: boolean): WireObject {
  const group = call.receiverType === 'group';
  const w: WireObject = {
    sessionId: call.sessionId,
    totalAudioMinutes: call.totalAudioMinutes,
    totalVideoMinutes: call.totalVideoMinutes,
    totalDuration: call.totalDuration,
    totalDurationInMinutes: call.totalDurationMinutes,
    totalParticipants: call.totalParticipants,
    type: call.type,
    mode: call.mode,
    receiverType: call.receiverType,
  };
  if (v.legacyEntities) {
    w.entities = {
      initiator: { entityType: 'user', entity: entity(call.initiator ?? '', false) },
      receiver: { entityType: group ? 'group' : 'user', entity: entity(call.receiver ?? '', group) },
    };
  } else if (v.entityObjects) {
    w.initiator = entity(call.initiator ?? '', false);
    w.receiver = entity(call.receiver ?? '', group);
  } else {
    w.initiator = call.initiator;
    w.receiver = call.receiver;
  }
  w.status = call.status;
  if (call.initiatedAt !== null) w.initiatedAt = call.initiatedAt;
  w.startedAt = call.startedAt;
  if (call.endedAt !== null) w.endedAt = call.endedAt;
  w.hasRecording = call.hasRecording;
  if (!omitParticipants) w.participants = call.participants.map((p, k) => wireParticipant(p, v, k));
  if (call.hasRecording) {
    const first = call.recordings[0];
    if (isUrlVariant(call, call.recordings) && first) {
      w.recordingUrl = first.recordingUrl;
    } else {
      w.recordings = call.recordings.map((r) => ({
        rid: r.rid,
        recording_url: r.recordingUrl,
        startTime: r.startTime,
        endTime: r.endTime,
        duration: r.durationMinutes,
      }));
    }
  }
  if (v.extraFields) {
    w.hasTranscription = false;
    w.metaData = [];
    w.tags = [];
    w.mid = v.callMid;
    w.x_extra = EXTRA_NESTED;
  }
  return w;
}

/**
 * Breaks a call the way a bad record would arrive (wrong types in required fields), two defects
 * each so that no lenient coercion can rescue it; the sessionId stays a string so the client can
 * name the rejected record.
 */
export function malformWireCall(w: WireObject, kind: number): WireObject {
  const out: WireObject = { ...w };
  switch (kind % 3) {
    case 0:
      out.type = 42;
      out.participants = 'oops';
      break;
    case 1:
      out.startedAt = 'yesterday';
      out.participants = 'oops';
      break;
    default:
      out.type = 42;
      out.startedAt = 'yesterday';
      break;
  }
  return out;
}
