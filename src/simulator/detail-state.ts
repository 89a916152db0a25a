import { LIVE_NOT_FOUND_GETS, unusableSpecs } from './detail-quirks.js';
import { unusableReply, type DetailReply, type UnusableSource } from './detail-get.js';
import { type DetailMark, pickDetailMarks } from './detail-picks.js';
import { type DetailView, type DuplicatePart, shapeCall, shapeWire, summaryEntry } from './detail-shape.js';
import { putTranscripts, withTranscripts } from './detail-transcripts.js';
import type { CallModel, GenerationContext } from './generate-call.js';
import type { TruthCall } from './truth.js';
import type { DetailQuirkCalls, DetailQuirks, UnusableGetSpec } from './types.js';
import type { WireObject } from './wire-call.js';

export type { DetailView, DuplicatePart } from './detail-shape.js';

/**
 * One app's detail quirks (README, Detail quirks): which call carries which mark, and the state
 * that changes as requests and advance() come (Get requests per marked call, settled late details,
 * ended live calls). Chosen afresh by `select` (setFaults); unset, `active` is false and the dataset
 * never calls the shaping hooks, so every body stays byte for byte what it was.
 */
export class DetailState {
  private marks = new Map<number, DetailMark>();
  private specs: UnusableGetSpec[] = [];
  private summary = false;
  private transcripts = false;
  private settled = false;
  private readonly liveEnded = new Set<number>();
  /** Get Call requests per marked call since `select`. */
  private readonly gets = new Map<number, number>();
  /** Duplicated calls in listing: List then needs its materialised order (list-calls.ts). */
  duplicates = false;

  get active(): boolean {
    return this.marks.size > 0 || this.summary || this.transcripts;
  }

  select(q: DetailQuirks | undefined, ctx: GenerationContext, taken: (i: number) => boolean, model: (i: number) => CallModel): void {
    this.marks = q ? pickDetailMarks(q, ctx, taken, model) : new Map();
    this.specs = unusableSpecs(q);
    this.summary = q?.summaryListEntries === true;
    this.transcripts = q?.transcriptions === true;
    this.duplicates = [...this.marks.values()].some((m) => m.kind === 'duplicate');
    this.settled = false;
    this.liveEnded.clear();
    this.gets.clear();
  }

  shapeCall(call: TruthCall, index: number, view: DetailView, ctx: GenerationContext): TruthCall {
    const mark = this.marks.get(index);
    let c = mark ? shapeCall(call, mark, view, { seed: ctx.seed, appId: ctx.appId, now: ctx.now, settled: this.settled, liveEnded: this.liveEnded.has(index) }, index) : call;
    if (this.transcripts) c = withTranscripts(c, ctx.seed, index, ctx.appId);
    return c;
  }

  /** Changes the wire object of `call` (already shaped by shapeCall) in place. */
  shapeWire(w: WireObject, call: TruthCall, index: number, view: DetailView, part: DuplicatePart, ctx: GenerationContext): void {
    const mark = this.marks.get(index);
    if (mark) shapeWire(w, mark, view, part);
    if (this.transcripts) putTranscripts(w, call, ctx.seed, index, ctx.appId);
    if (this.summary && view === 'list') summaryEntry(w, ctx.seed, index);
  }

  isMarked(index: number): boolean {
    return this.marks.has(index);
  }

  isDuplicated(index: number): boolean {
    return this.marks.get(index)?.kind === 'duplicate';
  }

  /** Ordinal of a duplicated call (even: its second entry follows it; odd: it opens the next page). */
  duplicateOrdinal(index: number): number {
    const m = this.marks.get(index);
    return m?.kind === 'duplicate' ? m.ordinal : 0;
  }

  /**
   * The Get Call answer a mark imposes on this request (counted), 'not-found', or null for the
   * call's own body. An unusable call answers properly from its `until`-th request on.
   */
  getReply(index: number, src: () => UnusableSource): DetailReply | 'not-found' | null {
    const mark = this.marks.get(index);
    if (!mark) return null;
    const n = (this.gets.get(index) ?? 0) + 1;
    this.gets.set(index, n);
    if (mark.kind === 'live-not-found') return n <= LIVE_NOT_FOUND_GETS ? 'not-found' : null;
    if (mark.kind !== 'unusable') return null;
    const spec = this.specs[mark.spec];
    if (!spec || this.proper(spec, n)) return null;
    return unusableReply(spec, src());
  }

  private proper(spec: UnusableGetSpec, nthRequest: number): boolean {
    return spec.until !== undefined && spec.until !== 'forever' && nthRequest >= spec.until;
  }

  /** Unusable calls whose Get Call has not answered properly yet. */
  unusablePending(): number[] {
    const out: number[] = [];
    for (const [i, m] of this.marks) {
      if (m.kind !== 'unusable') continue;
      const spec = this.specs[m.spec];
      if (spec && !this.proper(spec, this.gets.get(i) ?? 0)) out.push(i);
    }
    return out;
  }

  /** advance({ endOngoing }): the live calls of liveBrieflyNotFound end; returns their indices. */
  endLive(): number[] {
    const out: number[] = [];
    for (const [i, m] of this.marks) {
      if (m.kind !== 'live-not-found' || this.liveEnded.has(i)) continue;
      this.liveEnded.add(i);
      out.push(i);
    }
    return out;
  }

  /** advance({ settleLateDetails }): returns the indices whose details appear now. */
  settle(): number[] {
    if (this.settled) return [];
    this.settled = true;
    return [...this.marks].filter(([, m]) => m.kind === 'late').map(([i]) => i);
  }

  /** Which calls each quirk affects (`id` names an index), with their Get counts. */
  describe(id: (i: number) => string, transcribed: () => string[]): DetailQuirkCalls {
    const of = (kind: DetailMark['kind'], also: (m: DetailMark) => boolean = () => true): string[] =>
      [...this.marks].filter(([, m]) => m.kind === kind && also(m)).sort(([a], [b]) => b - a).map(([i]) => id(i));
    const gets = new Map<string, number>();
    for (const i of this.marks.keys()) gets.set(id(i), this.gets.get(i) ?? 0);
    return {
      unusableGet: this.specs.map((_, n) => of('unusable', (m) => m.kind === 'unusable' && m.spec === n)),
      lateDetails: of('late'),
      lateDetailsSettled: this.settled,
      participantsWithoutUid: { absent: of('uid', (m) => m.kind === 'uid' && m.absent), empty: of('uid', (m) => m.kind === 'uid' && !m.absent) },
      callsWithoutType: { noType: of('no-type'), noStatus: of('no-status'), unknownType: of('unknown-type') },
      implausibleMinutes: { negative: of('negative'), huge: of('huge') },
      liveBrieflyNotFound: of('live-not-found'),
      stuckInitiated: of('stuck'),
      duplicateEntries: of('duplicate'),
      transcribed: this.transcripts ? transcribed() : [],
      gets,
    };
  }
}
