import { classifyCall, formatTimer } from './classify.js';
import { type GroupDirectory, GROUP_POOL_SIZE, USER_POOL_SIZE, userUid } from './groups.js';
import { hash3, Rng, Salt } from './prng.js';
import { sessionIdFor } from './session-id.js';
import { pickVariant, uuidLike, type WireVariant } from './wire-variant.js';
import type { Timeline } from './timeline.js';
import type { TruthCall, TruthParticipant, TruthRecording } from './truth.js';

export type { WireVariant } from './wire-variant.js';

/** Everything a call's content depends on besides its index. */
export interface GenerationContext {
  appId: string;
  region: string;
  seed: number;
  now: number;
  baseCount: number;
  timeline: Timeline;
  groups: GroupDirectory;
}

export type NonFinalStatus = 'initiated' | 'ongoing';

export interface CallModel {
  index: number;
  /** The call once final; for a still-running call, how it will look after advance() ends it. */
  final: TruthCall;
  /** Non-null while the call is running (only the newest few calls, see timeline.ts). */
  nonFinal: NonFinalStatus | null;
  variant: WireVariant;
  /** The relation the generator aimed at for an answered call (tests check classifyCall agrees). */
  intent: Intent | null;
}

const GROUP_CALL_SHARE = 0.3;
const AUDIO_SHARE = 0.55;
const USER_MODES = [['call', 0.85], ['meet', 0.1], ['presenter', 0.05]] as const;
const GROUP_MODES = [['meet', 0.7], ['presenter', 0.2], ['call', 0.1]] as const;
/** `busy`, `cancelled` and `missed` are SDK statuses the seed does not list: they must be stored too. */
const FINAL_STATUSES = [
  ['ended', 0.7],
  ['unanswered', 0.09],
  ['rejected', 0.07],
  ['canceled', 0.07],
  ['busy', 0.025],
  ['cancelled', 0.025],
  ['missed', 0.02],
] as const;
export type Intent = 'participant_sum' | 'wall_clock' | 'mismatch';
const INTENTS = [['participant_sum', 0.5], ['wall_clock', 0.35], ['mismatch', 0.15]] as const;
const RECORDED_SHARE = 0.15;
const RECORDING_URL_VARIANT_SHARE = 0.1;
const MULTI_DEVICE_SHARE = 0.1;
const AUDIO_ONLY_IN_VIDEO_SHARE = 0.1;
/** api-seed.md §1: a call can have up to 50 participants. */
const MAX_PARTICIPANT_ENTRIES = 50;
const MIN_SECONDS: Record<Intent, number> = { participant_sum: 5, wall_clock: 20, mismatch: 30 };

function nonFinalStatusFor(rank: number, u: number): NonFinalStatus | null {
  if (rank === 0) return u < 0.4 ? 'initiated' : 'ongoing';
  if (rank === 1) return u < 0.7 ? 'ongoing' : null;
  if (rank === 2) return u < 0.4 ? 'ongoing' : null;
  return null;
}

function deviceIdFor(rng: Rng, integer: boolean): string {
  if (integer) return String(rng.int(100_000, 2_000_000_000));
  const h = rng.hex(40);
  return `${uuidLike(h)}@rtc.cometchat.io/${h.slice(32, 40)}`;
}

/** Device ids are unique within a call: (uid, deviceId) identifies a participant entry. */
function uniqueDeviceId(rng: Rng, integer: boolean, taken: Set<string>): string {
  let d = deviceIdFor(rng, integer);
  while (taken.has(d)) d = deviceIdFor(rng, integer);
  taken.add(d);
  return d;
}

/** Log-uniform seconds between lo and hi: many short calls, a long tail of long ones. */
function logUniform(rng: Rng, lo: number, hi: number): number {
  return Math.round(Math.exp(Math.log(lo) + rng.next() * (Math.log(hi) - Math.log(lo))));
}

interface Cast {
  initiator: string;
  receiver: string;
  uids: string[];
}

function userCast(rng: Rng): Cast {
  const initiatorN = rng.int(1, USER_POOL_SIZE);
  let receiverN = rng.int(1, USER_POOL_SIZE - 1);
  if (receiverN >= initiatorN) receiverN++;
  const used = new Set([initiatorN, receiverN]);
  const extra = rng.chance(0.15) ? rng.int(1, 3) : 0;
  while (used.size < 2 + extra) used.add(rng.int(1, USER_POOL_SIZE));
  const uids = [...used].map(userUid);
  return { initiator: userUid(initiatorN), receiver: userUid(receiverN), uids };
}

function groupCast(groups: GroupDirectory, rng: Rng): Cast {
  const k = rng.int(1, GROUP_POOL_SIZE);
  const n = rng.chance(0.03) ? rng.int(13, MAX_PARTICIPANT_ENTRIES - 1) : rng.int(2, 11);
  const uids = groups.pickParticipants(k, rng, n);
  const initiator = uids[0] ?? userUid(1);
  return { initiator, receiver: groups.guidOf(k), uids };
}

function notJoined(uid: string, state: string): TruthParticipant {
  return { uid, deviceId: '', audioMinutes: 0, videoMinutes: 0, totalMinutes: 0, isJoined: false, joinedAt: null, leftAt: null, state };
}

function joined(uid: string, deviceId: string, joinedAt: number, leftAt: number, audioOnly: boolean, type: string): TruthParticipant {
  const minutes = (leftAt - joinedAt) / 60;
  const audio = type === 'audio' || audioOnly ? minutes : 0;
  const video = type === 'audio' || audioOnly ? 0 : minutes;
  return { uid, deviceId, audioMinutes: audio, videoMinutes: video, totalMinutes: audio + video, isJoined: true, joinedAt, leftAt, state: 'ended' };
}

function sums(participants: readonly TruthParticipant[]): { audio: number; video: number } {
  let audio = 0;
  let video = 0;
  for (const p of participants) {
    audio += p.audioMinutes;
    video += p.videoMinutes;
  }
  return { audio, video };
}

/** Recordings inside [startedAt, endedAt]; duration in minutes as api-seed.md §2.6 says. */
export function makeRecordings(rng: Rng, sessionId: string, appId: string, startedAt: number, endedAt: number, urlVariant: boolean): TruthRecording[] {
  const url = (rid: string): string => `https://recordings.cometchat.invalid/${appId}/${rid}.mp4`;
  if (urlVariant) {
    // The SDK's single `recordingUrl` carries no id, times or duration: callsync keys it by sessionId.
    return [{ rid: `${sessionId}:recordingUrl`, durationMinutes: null, startTime: null, endTime: null, recordingUrl: url(rng.hex(24)) }];
  }
  const count = rng.chance(0.2) ? 2 : 1;
  const span = endedAt - startedAt;
  const out: TruthRecording[] = [];
  for (let k = 0; k < count; k++) {
    const segStart = startedAt + Math.floor((k * span) / count);
    const segEnd = startedAt + Math.floor(((k + 1) * span) / count);
    const len = segEnd - segStart;
    const start = segStart + Math.floor(rng.next() * 0.2 * len);
    const end = Math.max(start + 1, segEnd - Math.floor(rng.next() * 0.2 * len));
    const rid = `rec_${rng.hex(20)}`;
    out.push({ rid, durationMinutes: (end - start) / 60, startTime: start, endTime: end, recordingUrl: url(rid) });
  }
  return out;
}

interface Totals {
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  totalDuration: string;
  totalParticipants: number;
}

function consistentTotals(audio: number, video: number, entries: number): Totals {
  const total = audio + video;
  return {
    totalAudioMinutes: audio,
    totalVideoMinutes: video,
    totalDurationMinutes: total,
    totalDuration: formatTimer(total * 60),
    totalParticipants: entries,
  };
}

/** Generates call #index of an app: a pure function of (context, index). */
export function generateCall(ctx: GenerationContext, index: number): CallModel {
  const rng = new Rng(hash3(ctx.seed, index, Salt.call));
  const variant = pickVariant(ctx.seed, index);
  const startedAt = ctx.timeline.startedAt(index);
  const sessionId = sessionIdFor(ctx.appId, ctx.region, ctx.seed, index);
  const rank = ctx.baseCount - 1 - index;
  const nonFinal = rank >= 0 ? nonFinalStatusFor(rank, rng.next()) : null;
  const isGroup = rng.chance(GROUP_CALL_SHARE);
  const type = rng.chance(AUDIO_SHARE) ? 'audio' : 'video';
  const mode = rng.weighted(isGroup ? GROUP_MODES : USER_MODES);
  const cast = isGroup ? groupCast(ctx.groups, rng) : userCast(rng);
  const status =
    nonFinal === 'ongoing' ? 'ended' : nonFinal === 'initiated' ? (rng.chance(0.5) ? 'ended' : 'unanswered') : rng.weighted(FINAL_STATUSES);
  // A running call ends a little after `now` (when advance() ends it); a finished one before `now`.
  const endsAfterNow = nonFinal !== null ? ctx.now + 60 + rng.int(0, 780) : null;
  const latestEnd = rank >= 0 && nonFinal === null ? ctx.now - 1 : Number.POSITIVE_INFINITY;
  const initiatedAt = rng.chance(0.9) ? startedAt - rng.int(1, 14) : null;

  const base: CallBase = {
    sessionId,
    type,
    mode,
    receiverType: isGroup ? 'group' : 'user',
    receiver: cast.receiver,
    initiator: cast.initiator,
    status,
    initiatedAt,
    startedAt,
  };

  let call: TruthCall;
  let intent: Intent | null = null;
  if (status !== 'ended') {
    // Never answered: nobody joined, all minutes zero (relation participant_sum, no issues).
    const ring = rng.int(3, 44);
    const endedAt = endsAfterNow ?? Math.min(startedAt + ring, latestEnd);
    const participants = cast.uids.map((uid, k) =>
      notJoined(uid, status === 'rejected' && k === 1 ? 'rejected' : 'unanswered'),
    );
    call = assemble(base, consistentTotals(0, 0, participants.length), endedAt, participants, []);
  } else {
    const ended = endedCall(ctx, rng, variant, base, cast, type, endsAfterNow, latestEnd);
    call = ended.call;
    intent = ended.intent;
  }
  // The truth states what the checks find, not what the generator aimed at.
  const { relation, issues } = classifyCall(call);
  call.relation = relation;
  call.issues = issues;
  return { index, final: call, nonFinal, variant, intent };
}

type CallBase = Pick<TruthCall, 'sessionId' | 'type' | 'mode' | 'receiverType' | 'receiver' | 'initiator' | 'status' | 'initiatedAt' | 'startedAt'>;

function endedCall(
  ctx: GenerationContext,
  rng: Rng,
  variant: WireVariant,
  base: CallBase,
  cast: Cast,
  type: string,
  endsAfterNow: number | null,
  latestEnd: number,
): { call: TruthCall; intent: Intent } {
  const startedAt = base.startedAt ?? 0;
  const intent: Intent = rng.weighted(INTENTS);
  let seconds = Math.max(MIN_SECONDS[intent], logUniform(rng, 8, 5400));
  if (endsAfterNow !== null) seconds = endsAfterNow - startedAt;
  else if (startedAt + seconds > latestEnd) seconds = Math.max(MIN_SECONDS[intent], latestEnd - startedAt);
  let endedAt = startedAt + seconds;

  // Who joined: at least two entries when possible, so wall_clock calls differ from the sums.
  const group = base.receiverType === 'group';
  // wall_clock participants stay >= 70 % of the call: with >= 2 of them the sums are >= 1.4x wall.
  const slack = intent === 'wall_clock' ? 0.15 : 0.3;
  const mayBeAudioOnly = type === 'video' && intent !== 'wall_clock';
  const participants: TruthParticipant[] = [];
  const devices = new Set<string>();
  const multiDevice = rng.chance(MULTI_DEVICE_SHARE) ? rng.int(0, 1) : -1;
  for (let k = 0; k < cast.uids.length; k++) {
    const uid = cast.uids[k] ?? '';
    if (k >= 2 && !rng.chance(group ? 0.75 : 0.7)) {
      participants.push(notJoined(uid, rng.chance(0.2) ? 'rejected' : 'unanswered'));
      continue;
    }
    // The same user on a second device: one entry per device (api-seed.md §2.4 totalParticipants).
    const copies = k === multiDevice && participants.length + 1 < MAX_PARTICIPANT_ENTRIES ? 2 : 1;
    for (let c = 0; c < copies; c++) {
      const a = Math.floor(rng.next() * slack * seconds);
      const b = Math.floor(rng.next() * slack * seconds);
      const joinedAt = startedAt + a;
      const leftAt = Math.max(joinedAt + 1, endedAt - b);
      const audioOnly = mayBeAudioOnly && rng.chance(AUDIO_ONLY_IN_VIDEO_SHARE);
      participants.push(joined(uid, uniqueDeviceId(rng, variant.deviceIdInteger, devices), joinedAt, leftAt, audioOnly, type));
    }
  }

  const wall = seconds / 60;
  let totals: Totals;
  if (intent === 'participant_sum') {
    const s = sums(participants);
    totals = consistentTotals(s.audio, s.video, participants.length);
  } else if (intent === 'wall_clock') {
    // As in the published example: call-level minutes are the wall clock, participants sum to more.
    const video = type === 'video' && rng.chance(0.5) ? wall : 0;
    totals = consistentTotals(wall, video, participants.length);
  } else {
    const broken = breakCall(rng, participants, startedAt, endedAt, type);
    endedAt = broken.endedAt;
    totals = broken.totals;
  }

  const recorded = endedAt - startedAt >= 5 && rng.chance(RECORDED_SHARE);
  const recordings = recorded
    ? makeRecordings(rng, base.sessionId, ctx.appId, startedAt, endedAt, rng.chance(RECORDING_URL_VARIANT_SHARE))
    : [];
  return { call: assemble(base, totals, endedAt, participants, recordings), intent };
}

/** One object literal with every field in a fixed order (spreads are slow on this hot path). */
function assemble(base: CallBase, totals: Totals, endedAt: number | null, participants: TruthParticipant[], recordings: TruthRecording[]): TruthCall {
  return {
    sessionId: base.sessionId,
    type: base.type,
    mode: base.mode,
    receiverType: base.receiverType,
    receiver: base.receiver,
    initiator: base.initiator,
    status: base.status,
    totalAudioMinutes: totals.totalAudioMinutes,
    totalVideoMinutes: totals.totalVideoMinutes,
    totalDurationMinutes: totals.totalDurationMinutes,
    totalDuration: totals.totalDuration,
    totalParticipants: totals.totalParticipants,
    hasRecording: recordings.length > 0,
    initiatedAt: base.initiatedAt,
    startedAt: base.startedAt,
    endedAt,
    participants,
    recordings,
    relation: 'participant_sum',
    issues: [],
  };
}

/**
 * Makes a mismatch call: totals that match neither the participant sums nor the wall clock, plus
 * some other failed checks chosen at random. classifyCall() then names exactly what fails.
 */
function breakCall(
  rng: Rng,
  participants: TruthParticipant[],
  startedAt: number,
  endedAt: number,
  type: string,
): { endedAt: number; totals: Totals } {
  const wantAvt = rng.chance(0.3);
  const wantTimer = rng.chance(0.3);
  const wantCount = rng.chance(0.25);
  const wantOutside = rng.chance(0.2);
  const wantNegative = rng.chance(0.1);

  if (wantOutside) {
    const k = participants.findIndex((p) => p.isJoined);
    const p = participants[k];
    if (p && p.joinedAt !== null && p.leftAt !== null) {
      const early = rng.chance(0.5);
      const joinedAt = early ? startedAt - rng.int(5, 120) : p.joinedAt;
      const leftAt = early ? p.leftAt : endedAt + rng.int(5, 120);
      participants[k] = joined(p.uid, p.deviceId, joinedAt, leftAt, p.audioMinutes > 0 && type === 'video', type);
    }
  }
  const finalEnd = wantNegative ? startedAt - rng.int(1, 600) : endedAt;
  const s = sums(participants);
  const wall = (finalEnd - startedAt) / 60;
  let f = 0.35 + rng.next() * 0.45;
  let audio = 0;
  let video = 0;
  for (let attempt = 0; ; attempt++) {
    if (type === 'audio') {
      audio = s.audio * f;
      video = 0;
    } else {
      audio = s.audio;
      video = s.video * f;
    }
    const sumHolds = Math.abs(audio - s.audio) <= 0.05 && Math.abs(video - s.video) <= 0.05;
    const wallHolds = Math.abs(audio - wall) <= 0.05 && (Math.abs(video) <= 0.05 || Math.abs(video - wall) <= 0.05);
    if (!sumHolds && !wallHolds) break;
    if (attempt >= 6) {
      // Tiny or degenerate sums: step well away from both relations.
      audio = s.audio + Math.abs(wall) + 1.5;
      break;
    }
    f *= 0.83;
  }
  let total = audio + video;
  if (wantAvt) total += 0.5 + rng.next() * 2.5;
  let timerSeconds = Math.round(total * 60);
  if (wantTimer) timerSeconds += rng.int(5, 120);
  let count = participants.length;
  if (wantCount) count = rng.chance(0.5) && count > 1 ? count - 1 : count + rng.int(1, 2);
  return {
    endedAt: finalEnd,
    totals: {
      totalAudioMinutes: audio,
      totalVideoMinutes: video,
      totalDurationMinutes: total,
      totalDuration: formatTimer(timerSeconds),
      totalParticipants: count,
    },
  };
}

