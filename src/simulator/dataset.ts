import { BoundedCache } from './cache.js';
import { nonFinalSnapshot, withLateRecordings } from './call-state.js';
import { withClassification } from './classify.js';
import { DetailState, type DetailView, type DuplicatePart } from './detail-state.js';
import { type CallModel, type GenerationContext, generateCall, makeRecordings } from './generate-call.js';
import { GroupDirectory } from './groups.js';
import { CallOverlays, longCallState, shiftCall, stratifiedPicks } from './overlays.js';
import { hash3, Rng, Salt } from './prng.js';
import { applyQuirkOverlays } from './quirk-overlays.js';
import { indexFromSessionId, sessionIdFor } from './session-id.js';
import { NON_FINAL_RANKS, Timeline } from './timeline.js';
import type { AppTruth, TruthCall } from './truth.js';
import { buildTruth } from './truth-build.js';
import type { DetailQuirks, ListingQuirks } from './types.js';
import { type UsageMetrics, windowedUsage } from './usage-metrics.js';
import { malformWireCall, toWireCall, type WireObject } from './wire-call.js';

/** Serialised List/Get bodies of recently served calls (repeats and retries are then one lookup). */
const BODY_CACHE_SIZE = 20_000;
/** advance({ addRecordings }) only touches calls this recent, which an incremental sync revisits. */
const LATE_RECORDING_WINDOW_SECONDS = 86_400;

export type { UsageMetrics } from './usage-metrics.js';

/** Statuses of calls that did start: startedAtZeroForUnstarted leaves these alone. */
const STARTED_STATUSES: ReadonlySet<string> = new Set(['ended', 'ongoing']);

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
  /** Time and shape changes from the quirks and advance() (overlays.ts). */
  readonly overlays = new CallOverlays();
  /** What list entries and Get answers hold under the detail quirks (detail-state.ts). */
  readonly details = new DetailState();
  /** startedAtZeroForUnstarted: truth startedAt null, wire startedAt 0. */
  private zeroUnstarted = false;
  /** Bumped whenever the set of listed calls or their time order may change (ListingOrder's cache key). */
  version = 0;

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

  private currentState(m: CallModel, view: DetailView = 'service'): TruthCall {
    let call = m.final;
    const long = this.overlays.active ? this.overlays.long.get(m.index) : undefined;
    if (long) call = longCallState(call, long, this.ctx.seed, m.index, this.ctx.now);
    else if (m.nonFinal !== null && !this.endedByAdvance.has(m.index)) call = nonFinalSnapshot(call, m.nonFinal, this.ctx.now);
    const shift = this.overlays.active ? this.overlays.shift.get(m.index) : undefined;
    if (shift !== undefined) call = shiftCall(call, shift);
    const late = this.lateRecordings.get(m.index);
    if (late) call = withLateRecordings(call, late);
    if (this.details.active) call = this.details.shapeCall(call, m.index, view, this.ctx);
    if (this.zeroUnstarted && call.startedAt !== null && call.status !== null && !STARTED_STATUSES.has(call.status)) call = withClassification({ ...call, startedAt: null });
    return call;
  }

  /** The wire form of the current state; startedAtZeroForUnstarted sends 0 where the truth has null. */
  private wireOf(m: CallModel, omitParticipants: boolean, view: DetailView = 'service', part: DuplicatePart = 'A'): WireObject {
    const call = this.currentState(m, view);
    let wire = toWireCall(call, m.variant, omitParticipants);
    if (this.zeroUnstarted && call.startedAt === null) wire.startedAt = 0;
    if (this.details.active) this.details.shapeWire(wire, call, m.index, view, part, this.ctx);
    const kind = this.malformed.get(m.index);
    if (kind !== undefined) wire = malformWireCall(wire, kind);
    return wire;
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

  private listOmits(m: CallModel): boolean {
    return (m.variant.listOmitsParticipants && this.listEntries === 'varied') || this.notFound.has(m.index);
  }

  private bodiesOf(index: number): Bodies {
    let b = this.bodies.get(index);
    if (!b) {
      b = {};
      this.bodies.set(index, b);
    }
    return b;
  }

  /** A List entry; `part` 'B' is the second entry of a duplicated call (duplicateEntries), not cached. */
  listEntryJson(index: number, part: DuplicatePart = 'A'): string {
    const b = part === 'A' ? this.bodiesOf(index) : {};
    if (b.list !== undefined) return b.list;
    const m = this.model(index);
    return (b.list = JSON.stringify(this.wireOf(m, this.listOmits(m), 'list', part)));
  }

  /** The Get Call body, in the call's envelope; null when Get must answer not-found. */
  getCallBody(index: number): string | null {
    if (this.notFound.has(index)) return null;
    const b = this.bodiesOf(index);
    if (b.get !== undefined) return b.get;
    const m = this.model(index);
    const json = JSON.stringify(this.wireOf(m, false));
    return (b.get = m.variant.legacyEnvelope ? `{"data":[${json}]}` : `{"data":${json}}`);
  }

  /** The Get Call wire object of call #index, fresh (detail-get.ts changes it). */
  getWire(index: number): WireObject {
    return this.wireOf(this.model(index), false);
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
    const nf = Math.min(Math.max(0, Math.floor(notFoundCount)), k);
    stratifiedPicks(this.ctx.seed, k, eligible).forEach((idx, j) => {
      if (j < nf) this.notFound.add(idx);
      else this.malformed.set(idx, j);
    });
    this.changed(true);
  }

  /**
   * Applies the data-shaping quirks (futureCalls, equalStartedAt, the live long calls of
   * endLiveWhilePaging, startedAtZeroForUnstarted) afresh; call after selectFaultyCalls.
   */
  applyQuirks(q: ListingQuirks | undefined): void {
    this.overlays.clearBelow(this.ctx.baseCount);
    this.zeroUnstarted = q?.startedAtZeroForUnstarted === true;
    const taken = (i: number): boolean => this.notFound.has(i) || this.malformed.has(i) || this.removed.has(i);
    if (q) applyQuirkOverlays(this.overlays, q, this.ctx, taken, (i) => this.model(i).final.status === 'ended');
    this.changed(true);
  }

  /** Chooses the calls of the detail quirks afresh; call after applyQuirks (calls a quirk moved are left alone). */
  applyDetailQuirks(q: DetailQuirks | undefined): void {
    const taken = (i: number): boolean => this.notFound.has(i) || this.malformed.has(i) || this.removed.has(i) || this.overlays.shift.has(i) || this.overlays.long.has(i);
    this.details.select(q, this.ctx, taken, (i) => this.model(i));
    this.changed(true);
  }

  /** advance({ settleLateDetails }): the late details appear in Get Call and the truth. */
  settleLateDetails(): string[] {
    const settled = this.details.settle();
    for (const i of settled) this.bodies.delete(i);
    this.metricsMemo.clear();
    return settled.map((i) => this.sessionIdOf(i));
  }

  /** True when List serves call #index (it exists, was not removed). */
  isListed(index: number): boolean {
    return index >= 0 && index < this.indexCount && !this.removed.has(index);
  }

  /** The time List sorts call #index by: its startedAt, or the generated one where that is null. */
  sortTime(index: number): number {
    const long = this.overlays.long.get(index);
    if (long) return long.startedAt;
    return this.ctx.timeline.startedAt(index) + (this.overlays.shift.get(index) ?? 0);
  }

  /** Indices of the calls running now (generated running calls not yet ended, live long calls). */
  liveIndices(): number[] {
    const out = this.overlays.liveIndices();
    for (let rank = 0; rank < NON_FINAL_RANKS; rank++) {
      const i = this.ctx.baseCount - 1 - rank;
      if (i < 0) break;
      if (this.isListed(i) && !this.endedByAdvance.has(i) && !this.overlays.long.has(i) && this.model(i).nonFinal !== null) out.push(i);
    }
    return out;
  }

  /** New newest calls (advance({ newCalls }), insertWhilePaging); returns their sessionIds. */
  addNewest(count: number): string[] {
    const ids: string[] = [];
    for (let k = 0; k < count; k++) {
      ids.push(this.sessionIdOf(this.indexCount));
      this.added++;
    }
    this.changed();
    return ids;
  }

  /**
   * advance({ backdatedCalls }): `count` finished calls that started `hoursAgo` before `now` (one a
   * minute apart, newest first) appear only now. They take new indices, shifted back in time.
   */
  addBackdated(count: number, hoursAgo: number): string[] {
    const ids: string[] = [];
    for (let k = 0; k < count; k++) {
      const i = this.indexCount;
      const target = this.ctx.now - Math.round(hoursAgo * 3600) - k * 60;
      this.overlays.shift.set(i, target - this.ctx.timeline.startedAt(i));
      ids.push(this.sessionIdOf(i));
      this.added++;
    }
    this.changed();
    return ids;
  }

  /**
   * advance({ revealLongCall }): a call that ran for days, hidden while it ran, appears ended a
   * minute before `now`. Until now it was in neither List nor the truth, so it takes a new index.
   */
  revealLongCall(startedDaysAgo: number): string {
    const i = this.indexCount;
    this.overlays.long.set(i, { startedAt: this.ctx.now - Math.round(startedDaysAgo * 86_400), endedAt: this.ctx.now - 60, live: false });
    this.added++;
    this.changed();
    return this.sessionIdOf(i);
  }

  /** Removes `count` calls spread over listing positions [0, span); returns their sessionIds. */
  removeListed(span: number, count: number): string[] {
    const limit = Math.min(span, this.visibleCount);
    const n = Math.min(Math.max(0, Math.floor(count)), limit);
    const victims: number[] = [];
    for (let k = 0; k < n; k++) victims.push(this.indexAtPosition(Math.floor(((k + 0.5) * limit) / n)));
    return this.removeIndices(victims);
  }

  /** Removes these calls from List, Get and the truth; returns their sessionIds. */
  removeIndices(victims: readonly number[]): string[] {
    for (const i of victims) this.removed.add(i);
    this.removedDesc = [...this.removed].sort((a, b) => b - a);
    this.changed();
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
    for (const i of [...this.overlays.endLive(), ...this.details.endLive()]) {
      this.bodies.delete(i);
      if (!this.removed.has(i)) ended.push(this.sessionIdOf(i));
    }
    this.changed();
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
    return buildTruth(this);
  }

  isRemoved(index: number): boolean {
    return this.removed.has(index);
  }

  isMalformed(index: number): boolean {
    return this.malformed.has(index);
  }

  /** The calls or their times changed: metrics are stale, and List's sorted order (its cache key); bodies too when `reshaped`. */
  private changed(reshaped = false): void {
    if (reshaped) this.bodies.clear();
    this.metricsMemo.clear();
    this.version++;
  }

  /** Usage metrics of calls with startedAt in [from, to), computed from the truth (usage-metrics.ts). */
  usageMetrics(fromSeconds: number, toSeconds: number): UsageMetrics {
    return windowedUsage(this, this.indexCount, this.overlays.active, this.metricsMemo, fromSeconds, toSeconds);
  }
}
