import { STUCK_MIN_DAYS, unusableSpecs } from './detail-quirks.js';
import type { CallModel, GenerationContext } from './generate-call.js';
import { spreadPicks } from './overlays.js';
import { NON_FINAL_RANKS } from './timeline.js';
import type { TruthCall } from './truth.js';
import type { DetailQuirks } from './types.js';

export type LateForm = 'recordings' | 'minutes' | 'both' | 'ended-at';
const LATE_FORMS: readonly LateForm[] = ['recordings', 'minutes', 'both', 'ended-at'];

/** What one detail quirk does to one call; a call carries one mark at most. */
export type DetailMark =
  | { kind: 'unusable'; spec: number; ordinal: number }
  | { kind: 'late'; form: LateForm }
  | { kind: 'uid'; absent: boolean; position: number }
  | { kind: 'no-type' }
  | { kind: 'no-status' }
  | { kind: 'unknown-type' }
  | { kind: 'negative'; position: number }
  | { kind: 'huge'; overDay: boolean; position: number }
  | { kind: 'live-not-found' }
  | { kind: 'stuck' }
  | { kind: 'duplicate'; ordinal: number };

const DAY = 86_400;
/**
 * The newest calls are left alone by the spread picks: they may be running (timeline.ts), and the
 * calls just below the running ones are where lateDetails and liveBrieflyNotFound pick theirs
 * (as recent as can be: a client re-fetches only recent calls).
 */
const UNTOUCHED_NEWEST = NON_FINAL_RANKS + 4;

/** An answered call: ended, with times, somebody joined (it has minutes to lose). */
export function isAnswered(c: TruthCall): boolean {
  return c.status === 'ended' && c.startedAt !== null && c.endedAt !== null && c.endedAt - c.startedAt >= 5 && c.participants.some((p) => p.isJoined);
}

function firstJoined(c: TruthCall): number {
  return c.participants.findIndex((p) => p.isJoined && p.totalMinutes > 0);
}

/**
 * Chooses the calls of every detail quirk, deterministically (same dataset and quirks, same calls),
 * from the finished generated calls that no fault or listing quirk owns (`taken`). lateDetails and
 * liveBrieflyNotFound take the newest answered calls (a client only re-fetches recent ones);
 * stuckInitiated takes calls older than STUCK_MIN_DAYS; the rest are spread over the history.
 */
export function pickDetailMarks(q: DetailQuirks, ctx: GenerationContext, taken: (i: number) => boolean, model: (i: number) => CallModel): Map<number, DetailMark> {
  const marks = new Map<number, DetailMark>();
  const limit = Math.max(0, ctx.baseCount - UNTOUCHED_NEWEST);
  const calls = new Map<number, CallModel>();
  const m = (i: number): CallModel => calls.get(i) ?? calls.set(i, model(i)).get(i)!;
  const free = (i: number): boolean => !taken(i) && !marks.has(i) && m(i).nonFinal === null;
  const answered = (i: number): boolean => free(i) && isAnswered(m(i).final);
  const newest = (count: number, ok: (i: number) => boolean): number[] => {
    const out: number[] = [];
    for (let i = ctx.baseCount - 1 - NON_FINAL_RANKS; i >= 0 && out.length < count; i--) if (ok(i)) out.push(i);
    return out;
  };
  const spread = (count: number, ok: (i: number) => boolean, below = limit): number[] => spreadPicks(below, count, (i) => !ok(i));

  newest(q.lateDetails?.calls ?? 0, answered).forEach((i, j) => marks.set(i, { kind: 'late', form: LATE_FORMS[j % LATE_FORMS.length] ?? 'recordings' }));
  for (const i of newest(q.liveBrieflyNotFound ?? 0, answered)) marks.set(i, { kind: 'live-not-found' });
  const stuckBelow = ctx.timeline.firstIndexAtOrAfter(ctx.now - STUCK_MIN_DAYS * DAY - 60, limit);
  for (const i of spread(q.stuckInitiated ?? 0, free, stuckBelow)) marks.set(i, { kind: 'stuck' });
  unusableSpecs(q).forEach((s, spec) => {
    spread(s.calls, answered).forEach((i, ordinal) => marks.set(i, { kind: 'unusable', spec, ordinal }));
  });
  // Both halves of a duplicated entry must be visible: not a call whose list entry omits participants.
  const splittable = (i: number): boolean => answered(i) && m(i).final.participants.length >= 2 && !m(i).variant.listOmitsParticipants;
  spread(q.duplicateEntries ?? 0, splittable).forEach((i, ordinal) => marks.set(i, { kind: 'duplicate', ordinal }));
  spread(q.participantsWithoutUid ?? 0, (i) => answered(i) && firstJoined(m(i).final) >= 0).forEach((i, j) => {
    marks.set(i, { kind: 'uid', absent: j % 2 === 0, position: firstJoined(m(i).final) });
  });
  const typeless = q.callsWithoutType ?? 0;
  if (typeless > 0) {
    const picks = spread(typeless + 2, answered);
    picks.forEach((i, j) => marks.set(i, j < typeless ? { kind: 'no-type' } : j === typeless ? { kind: 'no-status' } : { kind: 'unknown-type' }));
  }
  // Calls with no issue of their own, so that what the checks find about them is the quirk alone.
  const plain = (i: number): boolean => answered(i) && m(i).final.issues.length === 0 && firstJoined(m(i).final) >= 0;
  for (const i of spread(q.implausibleMinutes?.negative ?? 0, plain)) marks.set(i, { kind: 'negative', position: firstJoined(m(i).final) });
  spread(q.implausibleMinutes?.huge ?? 0, plain).forEach((i, j) => marks.set(i, { kind: 'huge', overDay: j % 2 === 1, position: firstJoined(m(i).final) }));
  return marks;
}
