/**
 * The order a listing's entries come in, observed from their times on every page (the service
 * documents none). Pure: no I/O.
 */

export type ListingOrder = 'newest-first' | 'oldest-first' | 'unordered' | 'unknown';
export const ORDER_KEYS = ['startedAt', 'initiatedAt', 'endedAt'] as const;
export type OrderKey = (typeof ORDER_KEYS)[number];

/** The times of one list entry (null when absent or not a usable time). */
export type EntryTimes = Readonly<Record<OrderKey, number | null>>;

interface KeyTrend {
  last: number | null;
  /** The field on the last entry of the page observed before (null: absent there). */
  tail: number | null;
  asc: number;
  desc: number;
}

/**
 * Observes the listing's order on each time field separately: the service may sort by any of them
 * (a call that ends late moves up a listing sorted by end time, not by start time). A field is
 * ordered when all its steps go one way; equal values are no step.
 */
export class OrderObserver {
  readonly #trends = new Map<OrderKey, KeyTrend>(ORDER_KEYS.map((k) => [k, { last: null, tail: null, asc: 0, desc: 0 }]));
  #tiedAcrossPages = false;
  #tiesAtEdges = false;

  /**
   * Records one page. `continues` is false when the page does not follow the previous one read
   * (the first page of a pass, a page re-read after stepping back, a page read backwards): then
   * its first entry is not compared with the previous page's last.
   */
  observe(page: readonly EntryTimes[], continues: boolean): void {
    for (const key of ORDER_KEYS) {
      const t = this.#trends.get(key)!;
      if (!continues) t.last = null;
      else if (t.tail !== null && page[0]?.[key] === t.tail) this.#tiedAcrossPages = true;
      const n = page.length;
      if (n >= 2 && ((page[0]![key] !== null && page[0]![key] === page[1]![key]) || (page[n - 1]![key] !== null && page[n - 1]![key] === page[n - 2]![key]))) this.#tiesAtEdges = true;
      if (page.length > 0) t.tail = page[page.length - 1]![key];
      for (const e of page) {
        const v = e[key];
        if (v === null) continue;
        if (t.last !== null) {
          if (v > t.last) t.asc++;
          else if (v < t.last) t.desc++;
        }
        t.last = v;
      }
    }
  }

  /**
   * Whether a page began with a time equal to the previous page's last, on any field: calls of equal
   * times split across a page boundary, which an order that leaves ties undecided (LIMIT/OFFSET over
   * an ORDER BY of that time) may split differently on each request.
   */
  get tiedAcrossPages(): boolean {
    return this.#tiedAcrossPages;
  }

  /**
   * Whether calls of equal times were split across pages, or a page began or ended with two of
   * them (a group that may reach over its edge). Seen only where a page follows the one read before
   * it, a split hides when calls move between requests: a removal shifted the boundary off the
   * group, and a page read again after stepping back is compared with nothing (a randomized
   * listing lost a call so, ok). This wider test is the one for removals (listing-proof.ts, countProof).
   */
  get tiesNearEdges(): boolean {
    return this.#tiedAcrossPages || this.#tiesAtEdges;
  }

  /** The field the listing is consistently ordered by, preferring startedAt, with its direction. */
  get sortedBy(): { key: OrderKey; order: 'newest-first' | 'oldest-first' } | undefined {
    for (const key of ORDER_KEYS) {
      const t = this.#trends.get(key)!;
      if (t.desc > 0 && t.asc === 0) return { key, order: 'newest-first' };
      if (t.asc > 0 && t.desc === 0) return { key, order: 'oldest-first' };
    }
    return undefined;
  }

  get order(): ListingOrder {
    const sorted = this.sortedBy;
    if (sorted) return sorted.order;
    for (const t of this.#trends.values()) if (t.asc > 0 || t.desc > 0) return 'unordered';
    return 'unknown';
  }
}
