import type { TruthCall } from './truth.js';

export interface UsageMetrics {
  audioMinutes: number;
  videoMinutes: number;
  recordedMinutes: number;
  activeUsers: number;
  concurrentUsers: number;
}

/** What the sum needs of the dataset. */
export interface UsageSource {
  truthCall(index: number): TruthCall | null;
  readonly ctx: { readonly now: number; readonly timeline: { startedAt(index: number): number; firstIndexAtOrAfter(t: number, count: number): number } };
}

/**
 * Usage metrics of calls with startedAt in [from, to), memoised per window. Without time overlays
 * (`moved` false) the window is found by binary search on the monotonic timeline; overlays move
 * calls in time, so then every call is looked at (quirk datasets are small).
 */
export function windowedUsage(src: UsageSource, count: number, moved: boolean, memo: Map<string, UsageMetrics>, from: number, to: number): UsageMetrics {
  const tl = src.ctx.timeline;
  const lo = moved ? 0 : tl.firstIndexAtOrAfter(from, count);
  const hi = moved ? count : to > from ? tl.firstIndexAtOrAfter(to, count) : lo;
  const key = moved ? `t${from}:${to}` : `${lo}:${hi}`;
  const known = memo.get(key);
  if (known) return known;
  const result = sumUsage(src, lo, hi, moved ? { from, to } : null, src.ctx.now);
  memo.set(key, result);
  return result;
}

/**
 * Usage metrics of the truth calls with index in [lo, hi) (and, when `window` is given, whose
 * startedAt is in it; a call without one counts at its generated time): participant user-minutes,
 * recording minutes, distinct joined users, and the peak number of simultaneously joined entries.
 * Computed from the truth, so a perfect sync's sums equal them.
 */
export function sumUsage(src: UsageSource, lo: number, hi: number, window: { from: number; to: number } | null, now: number): UsageMetrics {
  let audio = 0;
  let video = 0;
  let recorded = 0;
  const users = new Set<string>();
  const events: number[] = [];
  for (let i = lo; i < hi; i++) {
    const call = src.truthCall(i);
    if (!call) continue;
    if (window) {
      const t = call.startedAt ?? src.ctx.timeline.startedAt(i);
      if (t < window.from || t >= window.to) continue;
    }
    for (const p of call.participants) {
      audio += p.audioMinutes;
      video += p.videoMinutes;
      if (!p.isJoined || p.joinedAt === null) continue;
      users.add(p.uid);
      // Encoded as time*2 (+1 for a join) so leaves sort before joins at the same second.
      events.push(p.joinedAt * 2 + 1, (p.leftAt ?? now) * 2);
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
  return {
    audioMinutes: roundMinutes(audio),
    videoMinutes: roundMinutes(video),
    recordedMinutes: roundMinutes(recorded),
    activeUsers: users.size,
    concurrentUsers: peak,
  };
}

/** Float sums depend on order; six decimals keep the metric stable for a client summing in SQL. */
function roundMinutes(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
