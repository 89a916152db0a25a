import type { GenerationContext } from './generate-call.js';
import { type CallOverlays, spreadPicks, tieGroupShifts } from './overlays.js';
import { DEFAULT_LIVE_CALLS, DEFAULT_LIVE_STARTED_DAYS_AGO, FUTURE_MIN_DAYS, FUTURE_SPREAD_DAYS } from './quirks.js';
import { NON_FINAL_RANKS } from './timeline.js';
import type { ListingQuirks } from './types.js';

const DAY = 86_400;
/**
 * The newest calls are left alone: they may be running (timeline.ts) and an incremental sync's
 * first page is about them; a few more keep the quirks off the running calls' neighbours.
 */
const UNTOUCHED_NEWEST = NON_FINAL_RANKS + 4;

/**
 * Puts the data-shaping quirks on generated calls (indices below baseCount), deterministically:
 * the same dataset and quirks pick the same calls. `taken` marks calls a fault already owns
 * (not-found, malformed, removed): they are not picked, so each call shows one anomaly at a time.
 */
export function applyQuirkOverlays(o: CallOverlays, q: ListingQuirks, ctx: GenerationContext, taken: (i: number) => boolean, answered: (i: number) => boolean): void {
  const tl = ctx.timeline;
  const limit = Math.max(0, ctx.baseCount - UNTOUCHED_NEWEST);
  if (q.equalStartedAt) {
    for (const [i, shift] of tieGroupShifts(ctx.seed, limit, (k) => tl.startedAt(k))) if (!taken(i)) o.shift.set(i, shift);
  }
  if (q.futureCalls) {
    // A clock error moves the whole call: relation and issues stay what they were. Answered calls
    // only, so that startedAtZeroForUnstarted cannot hide the future startedAt.
    const picks = spreadPicks(limit, q.futureCalls, (i) => taken(i) || o.shift.has(i) || !answered(i));
    picks.forEach((i, j) => {
      const target = ctx.now + (FUTURE_MIN_DAYS + (j % FUTURE_SPREAD_DAYS)) * DAY + j * 97;
      o.shift.set(i, target - tl.startedAt(i));
    });
  }
  const live = q.endLiveWhilePaging;
  if (live) {
    const count = live.liveCalls ?? DEFAULT_LIVE_CALLS;
    const at = tl.firstIndexAtOrAfter(ctx.now - (live.startedDaysAgo ?? DEFAULT_LIVE_STARTED_DAYS_AGO) * DAY, limit);
    // Long calls keep their generated startedAt, so once ended they sort where that index sorts.
    for (let i = Math.min(at, limit - 1), made = 0; i >= 0 && made < count; i--) {
      if (taken(i) || o.shift.has(i)) continue;
      o.long.set(i, { startedAt: tl.startedAt(i), endedAt: ctx.now + 120 + 60 * made, live: true });
      made++;
    }
  }
}
