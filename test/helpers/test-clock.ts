import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Clock, Timer } from '../../src/config/clock.js';

interface Pending {
  id: number;
  at: number;
  every: number | undefined;
  fn: () => void | Promise<void>;
}

/**
 * A Clock that stands still until the test advances it. Timers and sleeps run when `advance` passes
 * their time, in time order, each at its own instant (`now()` reads its due time while it runs), and
 * a timer's returned promise is awaited before the next one: a lease renewal has written its row when
 * `advance` resolves. Everything else (HTTP, SQLite) stays real; only time is simulated.
 */
export class TestClock implements Clock {
  #now: number;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  /** What random() returns: the middle of the jitter range by default, so waits are predictable. */
  randomValue = 0.5;

  constructor(startMs = Date.UTC(2025, 11, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  random(): number {
    return this.randomValue;
  }

  /** How many timers and sleeps are waiting. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Milliseconds from now to the earliest waiting timer or sleep; undefined when none waits. */
  get nextDueIn(): number | undefined {
    let at: number | undefined;
    for (const p of this.#pending.values()) if (at === undefined || p.at < at) at = p.at;
    return at === undefined ? undefined : at - this.#now;
  }

  setTimeout(fn: () => void | Promise<void>, ms: number): Timer {
    return this.#add(fn, ms, undefined);
  }

  setInterval(fn: () => void | Promise<void>, ms: number): Timer {
    return this.#add(fn, ms, Math.max(1, ms));
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        timer.cancel();
        reject(signal!.reason as Error);
      };
      const timer = this.#add(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms, undefined);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Moves time forward by `ms`, running every timer and sleep that falls due on the way, and lets
   * the code they wake run until it waits on something else (I/O or another timer).
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await settle();
      const due = [...this.#pending.values()].filter((p) => p.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.#now = Math.max(this.#now, due.at);
      if (due.every === undefined) this.#pending.delete(due.id);
      else due.at += due.every;
      await due.fn();
    }
    this.#now = target;
    await settle();
  }

  #add(fn: () => void | Promise<void>, ms: number, every: number | undefined): Timer {
    const id = this.#nextId++;
    this.#pending.set(id, { id, at: this.#now + Math.max(0, ms), every, fn });
    return { cancel: () => void this.#pending.delete(id) };
  }
}

/** Lets promise chains woken by a timer run to their next real wait. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await yieldToEventLoop();
}
