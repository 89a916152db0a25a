import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Transaction } from 'kysely';
import { markNotFound, upsertCalls } from '../store/calls-repo.js';
import { clearRetries, recordRetries, type RetryReason } from '../store/retries-repo.js';
import { insertRejected } from '../store/runs-repo.js';
import type { Clock, Timer } from '../config/clock.js';
import type { CallRows, Database, NewRejectedRow } from '../store/schema.js';

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

/**
 * The app's retry list as a run leaves it (stored at the start, then what each transaction adds and
 * takes off): a fetched call is taken off only when it is on it, so a sync whose list is empty
 * (every first sync) sends no delete per page. `known` false: the set may say what a rolled-back
 * transaction did, and every clear is sent.
 */
export interface RetryListView {
  ids: Set<string>;
  known: boolean;
}

/**
 * Writes a batch of page writes in the caller's transaction: rows, not-found marks, rejects and the
 * retry list, in page order. Returns how many rejects were filed (new ones only).
 */
export async function writeBatch(trx: Transaction<Database>, appId: string, region: string, batch: readonly PageWrite[], retryList: RetryListView, now: number): Promise<number> {
  let rejected = 0;
  // The calls of consecutive pages go in one upsert: fewer, larger statements. SQLite copies every
  // existing page a statement changes into its statement journal once per statement, and pages of a
  // hundred calls, split into statements of 64 + 32 + 4 rows, had each index page copied many times
  // over. A not-found mark (calls too) waits for the rows before it.
  let rows: CallRows[] = [];
  const writeRows = async (): Promise<void> => {
    if (rows.length) await upsertCalls(trx, rows);
    rows = [];
  };
  for (const w of batch) {
    for (const row of w.rows) rows.push(row);
    if (w.notFoundIds.length) {
      await writeRows();
      await markNotFound(trx, appId, w.notFoundIds, now);
    }
    if (w.rejects.length) rejected += await insertRejected(trx, w.rejects);
    // The retry list changes with the rows it is about: a crash cannot lose a call from it.
    const clear = retryList.known ? w.cleared.filter((id) => retryList.ids.delete(id)) : w.cleared;
    if (clear.length) await clearRetries(trx, appId, clear);
    if (w.retries.length) {
      await recordRetries(trx, appId, region, w.retries, now);
      for (const e of w.retries) retryList.ids.add(e.sessionId);
    }
  }
  await writeRows();
  return rejected;
}
