import type { ApiCall } from '../source/schemas.js';

/**
 * The newest startedAt listed, which incremental runs re-list back from (minus the lookback). A
 * time beyond now + the allowed clock skew is a clock error somewhere: it never moves the
 * watermark, since a watermark in the future would make every later run stop too early.
 */
export class WatermarkTracker {
  #value: number | null;
  readonly #limit: number;
  readonly future: { sessionId: string; startedAt: number }[] = [];

  /** `start` is the stored watermark (null on a full sync: it is recomputed from what is listed). */
  constructor(start: number | null, nowSeconds: number, maxClockSkewSeconds: number) {
    this.#value = start;
    this.#limit = nowSeconds + maxClockSkewSeconds;
  }

  see(call: ApiCall): void {
    const t = call.startedAt;
    if (t == null) return;
    if (t > this.#limit) {
      this.future.push({ sessionId: call.sessionId, startedAt: t });
      return;
    }
    if (this.#value === null || t > this.#value) this.#value = t;
  }

  get value(): number | null {
    return this.#value;
  }
}
