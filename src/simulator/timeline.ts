import { Salt, unitHash } from './prng.js';

/** The dataset covers about half a year of calls ending at `now`. */
export const DATASET_SPAN_SECONDS = 180 * 86_400;
/**
 * Only the newest few calls may still be running (status initiated/ongoing): they sit in the last
 * hour before `now`, in slots of 10 minutes, whatever the dataset's density.
 */
export const NON_FINAL_RANKS = 4;
const RECENT_FIRST_OFFSET = 45;
const RECENT_SLOT_SECONDS = 600;
const RECENT_JITTER_SECONDS = 300;
const OLDER_FIRST_OFFSET = RECENT_FIRST_OFFSET + NON_FINAL_RANKS * RECENT_SLOT_SECONDS;
/** Calls added later (advance(), insertWhilePaging) start a minute apart after `now`. */
const EXTENSION_SPACING_SECONDS = 60;

/**
 * startedAt as a pure, non-decreasing function of the call index (index 0 = oldest). Being cheap and
 * monotonic lets the stats endpoint binary-search a time window without generating calls.
 */
export class Timeline {
  private readonly recent: number;
  private readonly spacing: number;

  constructor(
    private readonly seed: number,
    readonly now: number,
    readonly baseCount: number,
  ) {
    this.recent = Math.min(NON_FINAL_RANKS, baseCount);
    this.spacing = (DATASET_SPAN_SECONDS - OLDER_FIRST_OFFSET) / Math.max(1, baseCount - this.recent);
  }

  startedAt(index: number): number {
    const u = unitHash(this.seed, index, Salt.time);
    if (index >= this.baseCount) {
      return this.now + (index - this.baseCount + 1) * EXTENSION_SPACING_SECONDS + Math.floor(u * 30);
    }
    const rank = this.baseCount - 1 - index;
    if (rank < this.recent) {
      return this.now - (RECENT_FIRST_OFFSET + rank * RECENT_SLOT_SECONDS + Math.floor(u * RECENT_JITTER_SECONDS));
    }
    // u < 1 keeps each call before the next slot, so the order never inverts.
    return this.now - (OLDER_FIRST_OFFSET + Math.floor((rank - this.recent + u) * this.spacing));
  }

  /** Smallest index in [0, count) whose startedAt >= t (count when none). */
  firstIndexAtOrAfter(t: number, count: number): number {
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.startedAt(mid) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
