// What the entries' times say about where a listing stands: the early stop at a window, and calls a
// later pass finds that the first missed (see CallListing).
import { ORDER_KEYS, type EntryTimes, type ListingOrder, type OrderKey } from './listing-evidence.js';

/** Every entry has a usable time, and even its newest is before `bound` (a page without times never qualifies). */
export function allOlder(times: readonly EntryTimes[], bound: number): boolean {
  return times.length > 0 && times.every((t) => {
    let newest: number | null = null;
    for (const k of ORDER_KEYS) {
      const v = t[k];
      if (v !== null && (newest === null || v > newest)) newest = v;
    }
    return newest !== null && newest < bound;
  });
}

/** Every entry of the page has a usable time older than the window, and the listing is newest first. */
export function olderThanWindow(times: readonly EntryTimes[], bound: number | undefined, order: ListingOrder | undefined): boolean {
  if (bound === undefined || order !== 'newest-first' || times.length === 0) return false;
  return allOlder(times, bound);
}

/** The newest value of each time field seen, to tell a call that arrived since from one missed. */
export class NewestTimes {
  readonly #newest: Record<OrderKey, number> = { startedAt: -Infinity, initiatedAt: -Infinity, endedAt: -Infinity };

  see(times: EntryTimes): void {
    for (const key of ORDER_KEYS) {
      const t = times[key];
      if (t !== null && t > this.#newest[key]) this.#newest[key] = t;
    }
  }

  /** Whether the entry is no newer than what was seen, on the listing's order key (without a key or a time: taken as not newer). */
  older(times: EntryTimes, key: OrderKey | undefined): boolean {
    if (key === undefined) return true;
    const t = times[key];
    return t === null || t <= this.#newest[key];
  }
}
