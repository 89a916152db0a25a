import type { Clock } from '../config/clock.js';
import type { RequestsPerMinute } from '../config/schema.js';

/**
 * Keeps one app's requests under its requests-per-minute limit by spacing them evenly, so a normal
 * run never sees a 429 (issue 2). Even spacing, not a token bucket: the service counts requests in
 * a sliding minute, and a bucket's burst would overrun that window.
 */
/** Fraction of the configured limit used, leaving room for clock skew and arrival jitter. */
export const PACING_HEADROOM = 0.97;

export class RequestPacer {
  /** Undefined when unlimited: no slots are kept, only a pause after a 429 holds requests. */
  readonly #intervalMs: number | undefined;
  #nextSlot = 0;
  #pausedUntil = 0;

  constructor(
    requestsPerMinute: RequestsPerMinute,
    private readonly clock: Pick<Clock, 'now' | 'sleep'>,
  ) {
    this.#intervalMs = requestsPerMinute === 'unlimited' ? undefined : 60_000 / (requestsPerMinute * PACING_HEADROOM);
  }

  /**
   * When the caller may send its request: undefined for "now", else a promise resolving at its slot;
   * callers are served in call order. Unlimited and not paused, it does no work at all (not even a
   * promise), so an unpaced sync pays nothing per request for the pacer.
   */
  acquire(signal?: AbortSignal): Promise<void> | undefined {
    const interval = this.#intervalMs;
    // Unlimited: nothing to space out. A proxy's 429 still pauses the app as it would a paced one.
    if (interval === undefined && this.#pausedUntil === 0) return undefined;
    const now = this.clock.now();
    const slot = Math.max(now, this.#nextSlot, this.#pausedUntil);
    if (interval !== undefined) this.#nextSlot = slot + interval;
    return slot > now ? this.clock.sleep(slot - now, signal) : undefined;
  }

  /** Holds every request of this app until `untilMs` (after a 429, or when the server says none remain). */
  pauseUntil(untilMs: number): void {
    if (untilMs > this.#pausedUntil) this.#pausedUntil = untilMs;
  }
}
