import type { CallsApi } from './calls-api.js';
import type { Pagination } from './schemas.js';

export interface CallsPage {
  page: number;
  entries: unknown[];
  pagination: Pagination | undefined;
}

/** The listing misbehaved in a way paging cannot get past (a page that repeats forever). */
export class ListingError extends Error {
  readonly code = 'LISTING_INCONSISTENT';
}

/** Consecutive pages that add no session not already seen in this pass before paging gives up. */
const MAX_PAGES_WITHOUT_NEW = 3;
/** Bits of the listed-ids filter: 2 MiB whatever the size of the listing (see ListedIds). */
const LISTED_IDS_BITS = 1 << 24;

/**
 * The session ids listed in this pass, as one bit per hash (a Bloom filter with one hash function):
 * a fixed 2 MiB instead of a set that grows with every call ever listed. It only decides whether a
 * page brought something new, so a false "seen" matters only if every id of a page hits one; at a
 * million listed ids about 6 % of ids do, and a page of 100 all doing so has odds of 1e-120.
 */
class ListedIds {
  readonly #bits = new Uint32Array(LISTED_IDS_BITS / 32);

  /** Records `id` and returns whether it was (probably) recorded before. */
  add(id: string): boolean {
    // FNV-1a over the UTF-16 code units.
    let h = 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    const bit = (h >>> 0) & (LISTED_IDS_BITS - 1);
    const word = bit >>> 5;
    const mask = 1 << (bit & 31);
    const had = (this.#bits[word]! & mask) !== 0;
    this.#bits[word] = this.#bits[word]! | mask;
    return had;
  }
}

function idsOf(entries: readonly unknown[]): string[] {
  return entries.map((e, i) => {
    const id = e && typeof e === 'object' ? (e as Record<string, unknown>).sessionId : undefined;
    return typeof id === 'string' ? id : `#${i}`;
  });
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/**
 * Pages through List Calls, newest first, until the listing is exhausted (the consumer may stop
 * earlier by leaving the loop). Trusts neither the page size asked for nor `total_pages`:
 * - the end is a short page at or past `total_pages`, or an empty page confirmed by a retry and
 *   by the page after it (an empty page in the middle is not the end, whatever `total_pages` says);
 * - a full page at `total_pages` may be followed by more (a `total_pages` that understates);
 * - when `total` drops between pages, calls were removed above the cursor and later calls moved up
 *   onto pages already read: it steps back as many pages as were removed, so none is skipped;
 * - a page identical to the previous one, or several pages bringing nothing new, is an error.
 * Calls inserted while paging push entries down: they repeat on the next page, harmlessly.
 */
export async function* paginateCalls(api: CallsApi, pageSize: number): AsyncGenerator<CallsPage, void, undefined> {
  const listed = new ListedIds();
  let page = 1;
  let previousIds: string[] | undefined;
  let previousTotal: number | undefined;
  let effectiveSize: number | undefined;
  let pagesWithoutNew = 0;
  let emptyRetried = false;
  let stepBacks = 0;

  for (;;) {
    const { entries, pagination } = await api.listCalls(page, pageSize);

    if (entries.length === 0) {
      if (page === 1) return;
      if (!emptyRetried) {
        // An empty page after a full one: the end, or a glitch. Ask again, then look one page
        // further, even where total_pages says the listing ended: total_pages may understate
        // (trusting it here lost every call after an empty page, and the watermark moved on).
        emptyRetried = true;
        continue;
      }
      const next = await api.listCalls(page + 1, pageSize);
      if (next.entries.length === 0) return;
      page += 1;
      emptyRetried = false;
      yield* emit(page, next.entries, next.pagination);
      if (!advance(next.entries, next.pagination)) return;
      continue;
    }
    emptyRetried = false;
    yield* emit(page, entries, pagination);
    if (!advance(entries, pagination)) return;
  }

  // Bookkeeping shared by the normal and the look-ahead path; returns false at the end of the listing.
  function* emit(p: number, e: unknown[], pg: Pagination | undefined): Generator<CallsPage> {
    const ids = idsOf(e);
    if (previousIds && sameIds(ids, previousIds)) {
      throw new ListingError(`List Calls page ${p} repeats the previous page exactly; the service's paging is broken, stopping this app (nothing after page ${p - 1} was read)`);
    }
    let fresh = 0;
    for (const id of ids) if (!listed.add(id)) fresh++;
    pagesWithoutNew = fresh === 0 ? pagesWithoutNew + 1 : 0;
    if (pagesWithoutNew >= MAX_PAGES_WITHOUT_NEW) {
      throw new ListingError(`List Calls pages ${p - MAX_PAGES_WITHOUT_NEW + 1}–${p} brought no call not already listed; the paging is looping, stopping this app`);
    }
    previousIds = ids;
    yield { page: p, entries: e, pagination: pg };
  }

  function advance(e: unknown[], pg: Pagination | undefined): boolean {
    // The page size the server really uses: its per_page when it states one, else the first page's count.
    effectiveSize ??= e.length;
    const size = pg?.per_page && pg.per_page > 0 ? pg.per_page : effectiveSize;
    const total = pg?.total;
    if (previousTotal !== undefined && total !== undefined && total < previousTotal && stepBacks < 50) {
      const back = Math.ceil((previousTotal - total) / Math.max(size, 1));
      previousTotal = total;
      stepBacks++;
      page = Math.max(1, page - back);
      previousIds = undefined;
      return true;
    }
    if (total !== undefined) previousTotal = total;
    const current = pg?.current_page ?? page;
    const short = e.length < size;
    if (short && (pg?.total_pages === undefined || current >= pg.total_pages)) return false;
    page += 1;
    return true;
  }
}
