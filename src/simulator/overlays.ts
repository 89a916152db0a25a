import { nonFinalSnapshot } from './call-state.js';
import { formatTimer, withClassification } from './classify.js';
import { hash3, Rng, Salt } from './prng.js';
import type { TruthCall, TruthParticipant } from './truth.js';

/**
 * A call that runs for days: listed (or hidden) while live, then ended. Its content keeps the
 * generated call's cast and type; times and minutes are rebuilt around [startedAt, endedAt].
 */
export interface LongCallSpec {
  startedAt: number;
  /** When it ends (or ended); meaningful once `live` is false. */
  endedAt: number;
  live: boolean;
}

/**
 * Per-call changes of time and shape that the quirks and advance() make, on top of the generated
 * calls. Quirk-made entries sit on generated indices (< baseCount) and are replaced by setFaults;
 * advance()-made ones sit on added indices and stay.
 */
export class CallOverlays {
  /** index → seconds added to every time of the call (futureCalls, equalStartedAt, backdated calls). */
  readonly shift = new Map<number, number>();
  readonly long = new Map<number, LongCallSpec>();

  /** True when some call's place in the time order differs from its index (List must sort). */
  get active(): boolean {
    return this.shift.size > 0 || this.long.size > 0;
  }

  /** Drops the quirk-made entries (those on generated indices). */
  clearBelow(baseCount: number): void {
    for (const i of [...this.shift.keys()]) if (i < baseCount) this.shift.delete(i);
    for (const i of [...this.long.keys()]) if (i < baseCount) this.long.delete(i);
  }

  /** Ends the live long calls; returns their indices. */
  endLive(): number[] {
    const ended: number[] = [];
    for (const [i, spec] of this.long) {
      if (!spec.live) continue;
      spec.live = false;
      ended.push(i);
    }
    return ended;
  }

  liveIndices(): number[] {
    return [...this.long].filter(([, s]) => s.live).map(([i]) => i);
  }
}

function plus(t: number | null, delta: number): number | null {
  return t === null ? null : t + delta;
}

/** Every time of the call moved by `delta` seconds: relations and issues stay as they were. */
export function shiftCall(call: TruthCall, delta: number): TruthCall {
  return {
    ...call,
    initiatedAt: plus(call.initiatedAt, delta),
    startedAt: plus(call.startedAt, delta),
    endedAt: plus(call.endedAt, delta),
    participants: call.participants.map((p) => ({ ...p, joinedAt: plus(p.joinedAt, delta), leftAt: plus(p.leftAt, delta) })),
    recordings: call.recordings.map((r) => ({ ...r, startTime: plus(r.startTime, delta), endTime: plus(r.endTime, delta) })),
  };
}

/** At most this many participants join a long call (the rest of the generated cast is dropped). */
const LONG_CALL_MAX_JOINED = 3;

/**
 * The long call as the service holds it: while live, the running snapshot (nobody has left, zero
 * totals); once ended, everyone joined near the start and left near the end, totals = the sums.
 */
export function longCallState(base: TruthCall, spec: LongCallSpec, seed: number, index: number, now: number): TruthCall {
  const rng = new Rng(hash3(seed, index, Salt.longCall));
  const uids = [...new Set(base.participants.map((p) => p.uid))].slice(0, LONG_CALL_MAX_JOINED);
  const participants: TruthParticipant[] = uids.map((uid, k) => {
    const joinedAt = spec.startedAt + 5 + 7 * k;
    const leftAt = spec.endedAt - 3 - 5 * k;
    const minutes = (leftAt - joinedAt) / 60;
    const audio = base.type === 'audio' ? minutes : 0;
    const h = rng.hex(40);
    return {
      uid,
      deviceId: `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}@rtc.cometchat.io/${h.slice(32, 40)}`,
      audioMinutes: audio,
      videoMinutes: minutes - audio,
      totalMinutes: minutes,
      isJoined: true,
      joinedAt,
      leftAt,
      state: 'ended',
    };
  });
  let audio = 0;
  let video = 0;
  for (const p of participants) {
    audio += p.audioMinutes;
    video += p.videoMinutes;
  }
  const final = withClassification({
    ...base,
    status: 'ended',
    totalAudioMinutes: audio,
    totalVideoMinutes: video,
    totalDurationMinutes: audio + video,
    totalDuration: formatTimer((audio + video) * 60),
    totalParticipants: participants.length,
    hasRecording: false,
    initiatedAt: spec.startedAt - 4,
    startedAt: spec.startedAt,
    endedAt: spec.endedAt,
    participants,
    recordings: [],
  });
  return spec.live ? nonFinalSnapshot(final, 'ongoing', now) : final;
}

/** `count` distinct indices spread over [0, eligible), skipping those `taken` says are in use. */
export function spreadPicks(eligible: number, count: number, taken: (i: number) => boolean): number[] {
  const picks: number[] = [];
  const used = new Set<number>();
  const n = Math.min(count, eligible);
  for (let j = 0; j < n; j++) {
    let i = Math.floor(((j + 0.5) * eligible) / n);
    let tries = 0;
    while ((taken(i) || used.has(i)) && tries++ < eligible) i = (i + 1) % eligible;
    if (tries > eligible) break;
    used.add(i);
    picks.push(i);
  }
  return picks;
}

/** equalStartedAt: about one group start in this many calls. */
const TIE_EVERY = 6;

/**
 * Groups of 2–3 consecutive calls that will share the oldest member's startedAt: index → shift.
 * Consecutive indices keep the listing's time order; only the order within a group is left open.
 */
export function tieGroupShifts(seed: number, limit: number, startedAt: (i: number) => number): Map<number, number> {
  const out = new Map<number, number>();
  for (let i = 0; i < limit; i++) {
    const h = hash3(seed, i, Salt.tieGroup);
    if (h % TIE_EVERY !== 0) continue;
    const size = 2 + ((h >>> 8) % 2);
    if (i + size > limit) break;
    const t = startedAt(i);
    for (let j = i + 1; j < i + size; j++) out.set(j, t - startedAt(j));
    i += size - 1;
  }
  return out;
}

/**
 * `k` distinct indices in [0, eligible), one per stratum (spread over the whole timeline), in a
 * seeded shuffled order: the not-found and malformed picks.
 */
export function stratifiedPicks(seed: number, k: number, eligible: number): number[] {
  const picks: number[] = [];
  if (k <= 0) return picks;
  const rng = new Rng(hash3(seed, k, Salt.faultPick));
  for (let j = 0; j < k; j++) picks.push(Math.floor(((j + rng.next()) * eligible) / k));
  for (let j = picks.length - 1; j > 0; j--) {
    const r = rng.int(0, j);
    const a = picks[j] ?? 0;
    picks[j] = picks[r] ?? 0;
    picks[r] = a;
  }
  return picks;
}
