import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { RetryReason } from '../store/retries-repo.js';
import type { Clock, Timer } from '../config/clock.js';
import type { CallRows, NewRejectedRow } from '../store/schema.js';

/** One page's writes: they go in whole, in one transaction. */
export interface PageWrite {
  rows: CallRows[];
  rejects: NewRejectedRow[];
  notFoundIds: string[];
  /** Calls whose details must be fetched again on later runs (the retry list), and calls leaving it. */
  retries: { sessionId: string; reason: RetryReason }[];
  cleared: string[];
}

/**
 * Group commit: fetched pages are written together once this many calls are waiting, or after
 * MAX_WRITE_DELAY_MS, or when the listing ends. A commit (WAL append and, every ~4 MB, a checkpoint)
 * costs about as much as writing a hundred calls, so pages of 100 written one per transaction spent
 * half the write time committing. Each page still goes in whole, in one transaction.
 */
export const MIN_CALLS_PER_TRANSACTION = 1_000;
export const MAX_CALLS_PER_TRANSACTION = 5_000;
/**
 * At most this long between a page fetched and written. 1 s was tried (issue 16): a little less
 * SQLite CPU on syncs fetching under 1,000 calls a second, but every small sync (incremental runs,
 * tests) then waited up to a second per transaction. A fast sync reaches MIN_CALLS_PER_TRANSACTION
 * first and commits without waiting.
 */
export const MAX_WRITE_DELAY_MS = 250;

/**
 * What a page adds to a transaction, in calls: its rows, not-found marks and rejected records. The
 * retry list's ids are not counted (a fetched call also clears its id: counted, it halved every
 * transaction of a detailFetch-always sync).
 */
function weight(w: PageWrite): number {
  return w.rows.length + w.rejects.length + w.notFoundIds.length;
}

/**
 * Writes fetched pages, several per transaction (see MIN_CALLS_PER_TRANSACTION), each page whole.
 * `commit` runs one transaction; its first failure is kept (`throwIfFailed`: the run then fails) and
 * the pages of that transaction are not written. Nothing stays queued after `flush()`.
 */
export class PageWriter {
  readonly #queue: PageWrite[] = [];
  #queuedWeight = 0;
  #running: Promise<void> | undefined;
  #timer: Timer | undefined;
  #due = false;
  #failure: { err: unknown } | undefined;

  constructor(
    private readonly commit: (batch: readonly PageWrite[]) => Promise<void>,
    private readonly clock: Pick<Clock, 'setTimeout'>,
  ) {}

  get queued(): number {
    return this.#queuedWeight;
  }

  /** Throws the first failed transaction's error, if any. */
  throwIfFailed(): void {
    if (this.#failure) throw this.#failure.err;
  }

  add(w: PageWrite): void {
    this.#queue.push(w);
    this.#queuedWeight += weight(w);
    this.#kick();
  }

  /** Writes everything queued now and resolves once it is written (or has failed). */
  async flush(): Promise<void> {
    this.#due = true;
    this.#kick();
    while (this.#running) await this.#running;
  }

  #kick(): void {
    if (this.#running || this.#queue.length === 0) return;
    if (this.#due || this.#queuedWeight >= MIN_CALLS_PER_TRANSACTION) {
      this.#timer?.cancel();
      this.#timer = undefined;
      this.#running = this.#drain().finally(() => {
        this.#running = undefined;
        this.#kick();
      });
    } else {
      this.#timer ??= this.clock.setTimeout(() => {
        this.#timer = undefined;
        this.#due = true;
        this.#kick();
      }, MAX_WRITE_DELAY_MS);
    }
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0 && (this.#due || this.#queuedWeight >= MIN_CALLS_PER_TRANSACTION)) {
      let take = 0;
      let n = 0;
      while (take < this.#queue.length && (take === 0 || n + weight(this.#queue[take]!) <= MAX_CALLS_PER_TRANSACTION)) n += weight(this.#queue[take++]!);
      const batch = this.#queue.splice(0, take);
      this.#queuedWeight -= n;
      try {
        await this.commit(batch);
      } catch (err) {
        this.#failure ??= { err };
      }
      // Let the responses that arrived meanwhile be read, and new requests go out.
      await yieldToEventLoop();
    }
    if (this.#queue.length === 0) this.#due = false;
  }
}
