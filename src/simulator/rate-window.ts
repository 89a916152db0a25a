/** The window the service's per-minute limits refer to (api-facts.md, Rate limits). */
export const RATE_WINDOW_MS = 60_000;

/**
 * A true sliding window: at most `limit` admitted requests in any `windowMs` (60 s, the service's,
 * unless FaultProfile.rateLimitWindowSeconds says otherwise). The admission times live in
 * a ring buffer of `limit` slots, oldest at `head`, so admitting costs O(1) amortised. Rejected
 * requests are not recorded: a client that waits Retry-After gets through.
 */
export class SlidingWindow {
  private readonly times: Float64Array;
  private head = 0;
  private size = 0;
  /** Set by admit()/peek(): requests left in the window and when the next slot frees (unix ms). */
  remaining = 0;
  resetAtMs = 0;
  /** Set by a failed admit(): milliseconds until a slot frees. */
  retryAfterMs = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number = RATE_WINDOW_MS,
  ) {
    this.times = new Float64Array(Math.max(1, limit));
    this.remaining = limit;
  }

  private expire(nowMs: number): void {
    const cutoff = nowMs - this.windowMs;
    while (this.size > 0 && (this.times[this.head] ?? 0) <= cutoff) {
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
  }

  private describe(nowMs: number): void {
    this.remaining = this.limit - this.size;
    this.resetAtMs = this.size > 0 ? (this.times[this.head] ?? nowMs) + this.windowMs : nowMs + this.windowMs;
  }

  /** Records the request if the window has room; false means answer 429. */
  admit(nowMs: number): boolean {
    this.expire(nowMs);
    if (this.size >= this.limit) {
      this.describe(nowMs);
      this.retryAfterMs = Math.max(0, this.resetAtMs - nowMs);
      return false;
    }
    this.times[(this.head + this.size) % this.times.length] = nowMs;
    this.size++;
    this.retryAfterMs = 0;
    this.describe(nowMs);
    return true;
  }

  /** Updates remaining/resetAtMs without recording a request (for answers that consume nothing). */
  peek(nowMs: number): void {
    this.expire(nowMs);
    this.describe(nowMs);
  }
}
