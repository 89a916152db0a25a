import type { Clock } from '../config/clock.js';

/**
 * Keeps one app's requests under its requests-per-minute limit by spacing them evenly, so a normal
 * run never sees a 429 (issue 2). Even spacing, not a token bucket: the service counts requests in
 * a sliding minute, and a bucket's burst would overrun that window.
 */
/** Fraction of the configured limit used, leaving room for clock skew and arrival jitter. */
export const PACING_HEADROOM = 0.97;

export class RequestPacer {
  readonly #intervalMs: number;
  #nextSlot = 0;
  #pausedUntil = 0;

  constructor(
    requestsPerMinute: number,
    private readonly clock: Pick<Clock, 'now' | 'sleep'>,
  ) {
    this.#intervalMs = 60_000 / (requestsPerMinute * PACING_HEADROOM);
  }

  /** Resolves when the caller may send its request; callers are served in call order. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const now = this.clock.now();
    const slot = Math.max(now, this.#nextSlot, this.#pausedUntil);
    this.#nextSlot = slot + this.#intervalMs;
    if (slot > now) await this.clock.sleep(slot - now, signal);
  }

  /** Holds every request of this app until `untilMs` (after a 429, or when the server says none remain). */
  pauseUntil(untilMs: number): void {
    if (untilMs > this.#pausedUntil) this.#pausedUntil = untilMs;
  }
}
