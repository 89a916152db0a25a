import { BoundedCache } from './cache.js';
import { nonFinalSnapshot, withLateRecordings } from './call-state.js';
import { withClassification } from './classify.js';
import { type CallModel, type GenerationContext, generateCall, makeRecordings } from './generate-call.js';
import { GroupDirectory } from './groups.js';
import { hash3, Rng, Salt } from './prng.js';
import { indexFromSessionId, sessionIdFor } from './session-id.js';
import { NON_FINAL_RANKS, Timeline } from './timeline.js';
import type { AppTruth, TruthCall } from './truth.js';
import { malformWireCall, toWireCall } from './wire-call.js';

/** Serialised List/Get bodies of recently served calls (repeats and retries are then one lookup). */
const BODY_CACHE_SIZE = 20_000;
/** advance({ addRecordings }) only touches calls this recent, which an incremental sync revisits. */
const LATE_RECORDING_WINDOW_SECONDS = 86_400;

export interface UsageMetrics {
  audioMinutes: number;
  videoMinutes: number;
  recordedMinutes: number;
  activeUsers: number;
  concurrentUsers: number;
}

interface Bodies {
  list?: string;
  get?: string;
}

/**
 * One app's calls: generated lazily from (seed, index) with every later change kept as a small
 * overlay (ended calls, late recordings, removed calls, added calls, fault selections), so a
 * million calls cost no memory until read. Index 0 is the oldest call; List serves newest first.
 */
export class AppDataset {
  readonly ctx: GenerationContext;
  private added = 0;
  private readonly endedByAdvance = new Set<number>();
  private readonly lateRecordings = new Map<number, TruthCall['recordings']>();
  private readonly removed = new Set<number>();
  /** `removed`, newest first, for position → index arithmetic. */
  private removedDesc: number[] = [];
  private notFound = new Set<number>();
  /** index → malformation kind */
  private malformed = new Map<number, number>();
  private readonly bodies = new BoundedCache<number, Bodies>(BODY_CACHE_SIZE);
  private readonly metricsMemo = new Map<string, UsageMetrics>();

  constructor(appId: string, region: string, seed: number, calls: number, now: number, private readonly listEntries: 'varied' | 'complete' = 'varied') {
    this.ctx = {
      appId,
      region,
      seed,
      now,
      baseCount: calls,
      timeline: new Timeline(seed, now, calls),
      groups: new GroupDirectory(seed, now),
    };
  }

  get groups(): GroupDirectory {
    return this.ctx.groups;
  }

  /** Indices ever generated: the initial calls plus those added since. */
  get indexCount(): number {
    return this.ctx.baseCount + this.added;
  }

  /** Calls List currently serves. */
  get visibleCount(): number {
    return this.indexCount - this.removed.size;
  }

  sessionIdOf(index: number): string {
    return sessionIdFor(this.ctx.appId, this.ctx.region, this.ctx.seed, index);
  }

  /**
   * Call #index as generated (~6 µs). Deliberately not cached: caching object graphs promotes them
   * to the old generation and made bulk reads 5x slower than regenerating; the serialised bodies
   * are cached instead (see `bodies`).
   */
  model(index: number): CallModel {
    return generateCall(this.ctx, index);
  }

  /** The call as the service holds it now (running or ended, with late recordings). */
  serviceCall(index: number): TruthCall {
    return this.currentState(this.model(index));
  }

  private currentState(m: CallModel): TruthCall {
    let call = m.final;
    if (m.nonFinal !== null && !this.endedByAdvance.has(m.index)) call = nonFinalSnapshot(call, m.nonFinal, this.ctx.now);
    const late = this.lateRecordings.get(m.index);
    if (late) call = withLateRecordings(call, late);
    return call;
  }

  /**
   * What a perfect sync stores for this call, or null when it must not store it (removed or
   * malformed). A not-found call is stored from its List entry alone, which has no participants,
   * so its participants are [] and its relation/issues are recomputed from that.
   */
  truthCall(index: number): TruthCall | null {
    if (index < 0 || index >= this.indexCount || this.removed.has(index) || this.malformed.has(index)) return null;
    const call = this.serviceCall(index);
    return this.notFound.has(index) ? withClassification({ ...call, participants: [] }) : call;
  }

  /** The index of a listed call by sessionId, or null (unknown, removed, not yet added). */
  findIndex(sessionId: string): number | null {
    const i = indexFromSessionId(sessionId, this.ctx.appId, this.ctx.region, this.ctx.seed);
    if (i === null || i >= this.indexCount || this.removed.has(i)) return null;
    return this.sessionIdOf(i) === sessionId ? i : null;
  }

  isNotFound(index: number): boolean {
    return this.notFound.has(index);
  }

  listEntryJson(index: number): string {
    let b = this.bodies.get(index);
    if (b?.list !== undefined) return b.list;
    const m = this.model(index);
    let wire = toWireCall(this.currentState(m), m.variant, (m.variant.listOmitsParticipants && this.listEntries === 'varied') || this.notFound.has(index));
    const kind = this.malformed.get(index);
    if (kind !== undefined) wire = malformWireCall(wire, kind);
    const json = JSON.stringify(wire);
    if (!b) {
      b = {};
      this.bodies.set(index, b);
    }
    b.list = json;
    return json;
  }

  /** The Get Call body, in the call's envelope; null when Get must answer not-found. */
  getCallBody(index: number): string | null {
    if (this.notFound.has(index)) return null;
    let b = this.bodies.get(index);
    if (b?.get !== undefined) return b.get;
    const m = this.model(index);
    let wire = toWireCall(this.currentState(m), m.variant, false);
    const kind = this.malformed.get(index);
    if (kind !== undefined) wire = malformWireCall(wire, kind);
    const json = JSON.stringify(wire);
    const body = m.variant.legacyEnvelope ? `{"data":[${json}]}` : `{"data":${json}}`;
    if (!b) {
      b = {};
      this.bodies.set(index, b);
    }
    b.get = body;
    return body;
  }

  /** Index of the call at 0-based `position` of the newest-first listing. */
  private indexAtPosition(position: number): number {
    let idx = this.indexCount - 1 - position;
    for (const r of this.removedDesc) {
      if (r >= idx) idx--;
      else break;
    }
    return idx;
  }

  /** Indices of the listing slice [offset, offset+limit), newest first. */
  listSlice(offset: number, limit: number): number[] {
    const out: number[] = [];
    if (offset >= this.visibleCount || limit <= 0) return out;
    let idx = this.indexAtPosition(offset);
    while (idx >= 0 && out.length < limit) {
      if (!this.removed.has(idx)) out.push(idx);
      idx--;
    }
    return out;
  }

  /** Chooses which calls are not-found and malformed; spread over the dataset, never running ones. */
  selectFaultyCalls(notFoundCount: number, malformedCount: number): void {
    this.notFound = new Set();
    this.malformed = new Map();
    const eligible = Math.max(0, this.ctx.baseCount - NON_FINAL_RANKS);
    const k = Math.min(Math.max(0, Math.floor(notFoundCount)) + Math.max(0, Math.floor(malformedCount)), eligible);
    if (k > 0) {
      const rng = new Rng(hash3(this.ctx.seed, k, Salt.faultPick));
      // One pick per stratum keeps picks distinct and spread over the whole timeline.
      const picks: number[] = [];
      for (let j = 0; j < k; j++) picks.push(Math.floor(((j + rng.next()) * eligible) / k));
      for (let j = picks.length - 1; j > 0; j--) {
        const r = rng.int(0, j);
        const a = picks[j] ?? 0;
        picks[j] = picks[r] ?? 0;
        picks[r] = a;
      }
      const nf = Math.min(Math.max(0, Math.floor(notFoundCount)), k);
      picks.forEach((idx, j) => {
        if (j < nf) this.notFound.add(idx);
        else this.malformed.set(idx, j);
      });
    }
    this.bodies.clear();
    this.metricsMemo.clear();
  }

  /** New newest calls (advance({ newCalls }), insertWhilePaging); returns their sessionIds. */
  addNewest(count: number): string[] {
    const ids: string[] = [];
    for (let k = 0; k < count; k++) {
      ids.push(this.sessionIdOf(this.indexCount));
      this.added++;
    }
    this.metricsMemo.clear();
    return ids;
  }

  /** Removes `count` calls spread over listing positions [0, span); returns their sessionIds. */
  removeListed(span: number, count: number): string[] {
    const limit = Math.min(span, this.visibleCount);
    const n = Math.min(Math.max(0, Math.floor(count)), limit);
    const victims: number[] = [];
    for (let k = 0; k < n; k++) victims.push(this.indexAtPosition(Math.floor(((k + 0.5) * limit) / n)));
    for (const i of victims) this.removed.add(i);
    this.removedDesc = [...this.removed].sort((a, b) => b - a);
    this.metricsMemo.clear();
    return victims.map((i) => this.sessionIdOf(i));
  }

  /** Running calls end (they end a little after `now`, see generate-call.ts). */
  endRunning(): string[] {
    const ended: string[] = [];
    for (let rank = 0; rank < NON_FINAL_RANKS; rank++) {
      const i = this.ctx.baseCount - 1 - rank;
      if (i < 0) break;
      if (this.removed.has(i) || this.endedByAdvance.has(i) || this.model(i).nonFinal === null) continue;
      this.endedByAdvance.add(i);
      this.bodies.delete(i);
      ended.push(this.sessionIdOf(i));
    }
    this.metricsMemo.clear();
    return ended;
  }

  /** Recordings appear on up to `count` ended, unrecorded calls of the newest 24 h, newest first. */
  addLateRecordings(count: number): string[] {
    const recorded: string[] = [];
    const since = this.ctx.now - LATE_RECORDING_WINDOW_SECONDS;
    for (let i = this.indexCount - 1; i >= 0 && recorded.length < count; i--) {
      if (this.ctx.timeline.startedAt(i) < since) break;
      if (this.removed.has(i) || this.malformed.has(i) || this.notFound.has(i) || this.lateRecordings.has(i)) continue;
      const call = this.serviceCall(i);
      if (call.status !== 'ended' || call.hasRecording || call.startedAt === null || call.endedAt === null) continue;
      if (call.endedAt - call.startedAt < 5 || !call.participants.some((p) => p.isJoined)) continue;
      const rng = new Rng(hash3(this.ctx.seed, i, Salt.lateRecording));
      this.lateRecordings.set(i, makeRecordings(rng, call.sessionId, this.ctx.appId, call.startedAt, call.endedAt, false));
      this.bodies.delete(i);
      recorded.push(call.sessionId);
    }
    this.metricsMemo.clear();
    return recorded;
  }

  /** The truth's calls, newest first. */
  *truthCalls(): IterableIterator<TruthCall> {
    for (let i = this.indexCount - 1; i >= 0; i--) {
      const call = this.truthCall(i);
      if (call) yield call;
    }
  }

  truth(): AppTruth {
    const calls = new Map<string, TruthCall>();
    const notFound = new Set<string>();
    const malformed = new Set<string>();
    const removed = new Set<string>();
    const groupNumbers = new Set<number>();
    for (let i = this.indexCount - 1; i >= 0; i--) {
      if (this.removed.has(i)) {
        removed.add(this.sessionIdOf(i));
        continue;
      }
      if (this.malformed.has(i)) {
        malformed.add(this.sessionIdOf(i));
        continue;
      }
      const call = this.truthCall(i);
      if (!call) continue;
      calls.set(call.sessionId, call);
      if (this.notFound.has(i)) notFound.add(call.sessionId);
      if (call.receiverType === 'group' && call.receiver !== null) {
        const k = this.groups.groupNumber(call.receiver);
        if (k !== null) groupNumbers.add(k);
      }
    }
    const groups = new Map<string, string[]>();
    const deletedGroups = new Set<string>();
    for (const k of [...groupNumbers].sort((a, b) => a - b)) {
      const guid = this.groups.guidOf(k);
      if (this.groups.isDeleted(k)) {
        groups.set(guid, []);
        deletedGroups.add(guid);
      } else {
        groups.set(guid, this.groups.members(k).members.map((m) => m.uid));
      }
    }
    return { appId: this.ctx.appId, region: this.ctx.region, calls, notFound, malformed, groups, deletedGroups, removed };
  }

  /**
   * Usage metrics of calls with startedAt in [from, to), computed from the truth (so a perfect
   * sync's sums equal them): participant user-minutes, recording minutes, distinct joined users, and
   * the peak number of simultaneously joined participant entries.
   */
  usageMetrics(fromSeconds: number, toSeconds: number): UsageMetrics {
    const lo = this.ctx.timeline.firstIndexAtOrAfter(fromSeconds, this.indexCount);
    const hi = toSeconds > fromSeconds ? this.ctx.timeline.firstIndexAtOrAfter(toSeconds, this.indexCount) : lo;
    const key = `${lo}:${hi}`;
    const memo = this.metricsMemo.get(key);
    if (memo) return memo;
    let audio = 0;
    let video = 0;
    let recorded = 0;
    const users = new Set<string>();
    const events: number[] = [];
    for (let i = lo; i < hi; i++) {
      const call = this.truthCall(i);
      if (!call) continue;
      for (const p of call.participants) {
        audio += p.audioMinutes;
        video += p.videoMinutes;
        if (!p.isJoined || p.joinedAt === null) continue;
        users.add(p.uid);
        // Encoded as time*2 (+1 for a join) so leaves sort before joins at the same second.
        events.push(p.joinedAt * 2 + 1, (p.leftAt ?? this.ctx.now) * 2);
      }
      for (const r of call.recordings) recorded += r.durationMinutes ?? 0;
    }
    events.sort((a, b) => a - b);
    let current = 0;
    let peak = 0;
    for (const e of events) {
      current += e % 2 === 1 ? 1 : -1;
      if (current > peak) peak = current;
    }
    const result = {
      audioMinutes: roundMinutes(audio),
      videoMinutes: roundMinutes(video),
      recordedMinutes: roundMinutes(recorded),
      activeUsers: users.size,
      concurrentUsers: peak,
    };
    this.metricsMemo.set(key, result);
    return result;
  }
}

/** Float sums depend on order; six decimals keep the metric stable for a client summing in SQL. */
function roundMinutes(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
