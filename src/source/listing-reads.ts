/**
 * Pages CallListing reads out of its forward walk: again in place after removals, and backwards from
 * the tail of an oldest-first listing to its window. Each page read is counted and its order
 * observed through the listing's PageReader.
 */
import type { ListCallsPage } from './calls-api.js';
import { type DistinctIds, entryIds, entryTimes, pageMeta } from './listing-evidence.js';
import type { EntryTimes, OrderKey, OrderObserver } from './listing-order.js';
import { cameUp, type Page } from './listing-proof.js';
import { allOlder } from './listing-times.js';
import type { CallsPage, PassResult } from './listing-types.js';
import type { FirstAgain } from './listing-verdict.js';

export interface PageReader {
  list(page: number): Promise<ListCallsPage>;
  /** Counts the page's ids among those seen and observes its order (not following another page). */
  record(ids: readonly string[], times: readonly EntryTimes[], page: number): void;
  readonly order: OrderObserver;
}

/** A reader counting each page's ids among those seen (and this pass's, on a later pass). */
export function pageReader(list: (page: number) => Promise<ListCallsPage>, order: OrderObserver, distinct: DistinctIds, seenThisPass: DistinctIds | undefined): PageReader {
  return {
    list,
    order,
    record: (ids, times) => {
      for (const id of ids) {
        distinct.add(id);
        seenThisPass?.add(id);
      }
      order.observe(times, false);
    },
  };
}

/** Reads pages `from` up to (not including) `to` again in place. */
export async function* readAgain(from: number, to: number, reader: PageReader): AsyncGenerator<CallsPage, void, undefined> {
  for (let page = from; page < to; page++) {
    const again = await reader.list(page);
    if (again.entries.length === 0) continue;
    reader.record(entryIds(again.entries, 'sessionId'), again.entries.map(entryTimes), page);
    yield { page, entries: again.entries, pagination: again.pagination };
  }
}

/**
 * Reads pages `from - 1` down to 1 (page 0 was read first) until one lies wholly before the
 * window (`bound`) while the listing still looks oldest first. Stopping there is a window listing
 * (the incremental proof judges it); reading all the way down covers the whole listing.
 */
export async function* readBackwards(
  from: number,
  firstRequested: number,
  bound: number,
  finish: (why: string, stoppedEarly?: boolean) => PassResult,
  reader: PageReader,
): AsyncGenerator<CallsPage, PassResult, undefined> {
  for (let index = from - 1; index >= 1; index--) {
    const requested = firstRequested + index;
    const res = await reader.list(requested);
    if (res.entries.length === 0) continue; // the listing shrank meanwhile: nothing here to read
    const times = res.entries.map(entryTimes);
    reader.record(entryIds(res.entries, 'sessionId'), times, requested);
    yield { page: requested, entries: res.entries, pagination: res.pagination };
    if (reader.order.sortedBy?.order === 'oldest-first' && allOlder(times, bound)) return finish('a page older than the window, read backwards (oldest first observed)', true);
  }
  return finish('read backwards to the first page');
}

/**
 * Reads the first page (`page`) again after a pass (one request): how many calls moved up onto it
 * from below since `first` was read (cameUp), and how many no pass had listed; its calls count as listed.
 */
export async function* readFirstAgain(
  list: (page: number) => Promise<ListCallsPage>,
  page: number,
  first: Page,
  distinct: DistinctIds,
  sorted: { key: OrderKey; order: 'newest-first' | 'oldest-first' } | undefined,
): AsyncGenerator<CallsPage, FirstAgain, undefined> {
  const again = await list(page);
  const ids = entryIds(again.entries, 'sessionId');
  const moved = cameUp(first, { ids, times: again.entries.map(entryTimes) }, (id) => distinct.has(id), sorted);
  let fresh = 0;
  for (const id of ids) if (distinct.add(id)) fresh++;
  if (again.entries.length > 0) yield { page, entries: again.entries, pagination: again.pagination };
  // Shorter than when first read, the listing not that short: capped now (round 12 F5), it may
  // have left out the very calls that moved up; counted as a move, so the listing is read again.
  const total = pageMeta(again.pagination, again.entries.length).total;
  return { moved: again.entries.length < first.ids.length && (total === undefined || total > again.entries.length) ? Math.max(moved, 1) : moved, fresh };
}
