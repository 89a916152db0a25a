/**
 * What a whole listing's distinct count proves against the `total` the service reported, when calls
 * came and went while it was read. Pure: no I/O.
 *
 * The count is the proof that nothing was skipped: every call listed counts once, and the count must
 * reach the total. Calls of equal times that the service's ORDER BY leaves undecided may split
 * differently across a page boundary on each request, so one request skips a call another repeats;
 * the count catches that, as long as only calls the service held throughout are counted. Calls that
 * came or went break it, exactly one for one:
 * - a call listed and then removed still counts, while the total falls past it;
 * - a call that arrived where the listing goes on to read it counts (at the end of an oldest-first
 *   listing, or in the middle of any), while the smallest total, the one held against, lacks it;
 * - removals with arrivals keeping the total level (rolling retention) do both, and no total shows.
 * Each hid a skipped call: `node scripts/search-listing-churn.mjs` found 629 of 4,000 randomized
 * listings with listed calls removed, 925 read oldest first with arrivals, 458 with calls appearing
 * mid-listing and 333 oldest first with rolling retention ending complete with a call missing.
 */
import { ORDER_KEYS, type EntryTimes, type OrderKey, type OrderObserver } from './listing-order.js';
import type { PassResult } from './listing-types.js';

export interface CountProof {
  /** The distinct calls held against the total. */
  count: number;
  /** The total they are held against (undefined: none reported). */
  total: number | undefined;
  shortfall: number | undefined;
}

/**
 * The totals of every page of a listing in the order read, passes and re-reads alike: how far they
 * fell in all, which bounds the removed calls a count may still hold. A zero beside an empty page is
 * no count (see ListingEnd.afterEmpty). Calls removed and added between two pages in equal numbers
 * leave no trace here; a listing read oldest first shows them on its first page (see cameUp).
 */
export class TotalTrail {
  #last: number | undefined;
  #fell = 0;

  see(total: number | undefined, entries: number): void {
    if (total === undefined || (total === 0 && entries === 0)) return;
    if (this.#last !== undefined && total < this.#last) this.#fell += this.#last - total;
    this.#last = total;
  }

  /** A fall shown to be of calls not yet listed (CallListing reads the page before the cursor again). */
  excuse(fell: number): void {
    this.#fell = Math.max(0, this.#fell - fell);
  }

  get fell(): number {
    return this.#fell;
  }
}

/**
 * Tells a fall of `total` that removed calls not yet listed from one that may have removed listed
 * ones. After a fall the listing steps back one page; read again, the page before the cursor shows
 * nothing removed above or on it (unmoved): the calls removed lay past it, so the fall hides no loss
 * (a listing whose oldest calls expire as it is read stays provable). The page whose total fell must
 * have been new ground, nothing past it read yet, or the removed calls may lie on pages read before.
 */
export class FallCheck {
  readonly #pagesAt = new Map<number, Page>();
  #pending: { index: number; fell: number; before: Page | undefined } | undefined;

  constructor(private readonly trail: TotalTrail) {}

  /** The listing stepped back `back` pages to `index` after `total` fell by `fell`. */
  steppedBack(index: number, back: number, fell: number, newGround: boolean): void {
    this.#pending = back === 1 && newGround ? { index, fell, before: this.#pagesAt.get(index) } : undefined;
  }

  /**
   * A page with entries was read at `index` (0-based position in the listing); its total fell by
   * `fell` since the page before; `furthest`: the furthest position read before it. A page read
   * before, nothing past it since, that shows a fall unchanged: the removed calls lay past it too.
   */
  read(index: number, page: Page, fell: number, furthest: number): void {
    const unshifted = (before: Page | undefined): boolean => before !== undefined && ORDER_KEYS.some((key) => unmoved(before, page, (t) => t[key]));
    const p = this.#pending;
    if (p?.index === index && unshifted(p.before)) this.trail.excuse(p.fell);
    if (fell > 0 && index === furthest && unshifted(this.#pagesAt.get(index))) this.trail.excuse(fell);
    this.#pending = undefined;
    this.#pagesAt.set(index, page);
    this.#pagesAt.delete(index - 3);
  }
}

/** A page as read: its entries' ids and times, in order. */
export interface Page {
  ids: readonly string[];
  times: readonly EntryTimes[];
}

/**
 * The calls on a later pass's first page that came up from below the earlier pass's first page: in
 * a listing ordered by a time, beyond that page's edge in the order (or more calls of the edge's own
 * time than before); without a usable time, seen further down: calls above them were removed in
 * between. A call that moved up unseen (the removal skipped it in the first pass) shows only by its
 * time. Arrivals at the head of a newest-first listing push calls down, so they do not count. Read
 * after a pass (CallListing#movedUp) or at the start of the next: a retention job deleting the
 * oldest calls of an oldest-first listing while new calls keep `total` level skips a call at every
 * page boundary, and the distinct count, holding the removed calls, still reaches the total (12 of
 * 300 lost while ok, found by a hostile fake).
 */
export function cameUp(
  before: Page,
  now: Page,
  seen: (id: string) => boolean,
  sorted: { key: OrderKey; order: 'newest-first' | 'oldest-first' } | undefined,
): number {
  const had = new Set(before.ids);
  const beyond = (v: number, edge: number): boolean => (sorted!.order === 'newest-first' ? v < edge : v > edge);
  let edge: number | undefined;
  if (sorted) {
    const values = before.times.map((t) => t[sorted.key]).filter((v): v is number => v !== null);
    if (values.length > 0) edge = sorted.order === 'newest-first' ? Math.min(...values) : Math.max(...values);
  }
  let moved = 0;
  now.ids.forEach((id, i) => {
    if (had.has(id)) return;
    const v = sorted ? now.times[i]?.[sorted.key] : null;
    if (edge === undefined || v === null || v === undefined) {
      if (seen(id)) moved++;
    } else if (beyond(v, edge)) moved++;
  });
  if (edge === undefined) return moved;
  // Calls of the edge's own time may swap places across it from one request to the next; only more
  // of them on the page than before shows calls pulled up.
  const atEdge = (times: readonly EntryTimes[]): number => times.filter((t) => t[sorted!.key] === edge).length;
  return moved + Math.max(0, atEdge(now.times) - atEdge(before.times)) + removedFrom(before, now, sorted!.key, beyond);
}

/**
 * Calls of `before` gone from `now` while a call below them, later in the order, is still there:
 * removed (arrivals push calls down, and none passes a call below it), so every call below moved up
 * one place. A call that arrived meanwhile keeps `total` level and may show no time beyond the edge
 * (one that never started): a listing read again after a shortfall counted the removed call and
 * the arrival, not a call of equal times its two passes split alike (3 of 60 ok with a call missing).
 */
function removedFrom(before: Page, now: Page, key: OrderKey, beyond: (v: number, edge: number) => boolean): number {
  const kept = new Set(now.ids);
  let deepestKept: number | undefined;
  let removed = 0;
  for (let i = before.ids.length - 1; i >= 0; i--) {
    const v = before.times[i]?.[key];
    if (v === null || v === undefined) continue;
    if (kept.has(before.ids[i]!)) deepestKept ??= v;
    else if (deepestKept !== undefined && beyond(deepestKept, v)) removed++;
  }
  return removed;
}

/**
 * How much of a rise in `total` between two pages read in a row arrivals above the cursor explain:
 * the calls the later page repeats from its start, pushed down from the end of the page before.
 * Calls of equal times at either edge of the repeated ones may swap places from one request to the
 * next and repeat a call with no push (a call arriving below the cursor then went uncounted: a
 * randomized listing, 1 of 56 lost, ok), so then none.
 */
export function riseAbove(before: Page, now: Page, key: OrderKey | undefined): number {
  const had = new Set(before.ids);
  let n = 0;
  while (n < now.ids.length && had.has(now.ids[n]!)) n++;
  if (n === 0) return 0;
  if (key === undefined) return n;
  const tied = (a: EntryTimes | undefined, b: EntryTimes | undefined): boolean => a !== undefined && b !== undefined && a[key] !== null && a[key] === b[key];
  return tied(now.times[n - 1], now.times[n]) || tied(before.times[before.times.length - n - 1], now.times[0]) ? 0 : n;
}

/**
 * Whether a page read twice shows nothing removed above or on it, by one time field of its entries
 * (`value`; absent counts as a value of its own). Calls that swap places from one request to the next
 * are calls the service orders alike, so the sequence of values down the page stays put. A removal
 * above shifts the page by one: the same sequence again means each value equals the next, so all
 * equal (refused). A removal on it pulls the calls below up: the same sequence again means the
 * removed call and all below it share the last value, and another call of it came in at the bottom,
 * so the calls of that last value changed (refused). (Same ids alone were not enough: a page wholly
 * inside a group of equal times read the same ids again with a listed call removed above it, 31 of
 * 4,000 randomized listings lost a call, ok.)
 */
function unmoved(before: Page, now: Page, value: (t: EntryTimes) => number | null): boolean {
  const n = before.times.length;
  if (n !== now.times.length || n === 0) return false;
  const v = (page: Page, i: number): number | null => value(page.times[i]!);
  let varied = false;
  for (let i = 0; i < n; i++) {
    if (v(before, i) !== v(now, i)) return false;
    if (v(before, i) !== v(before, 0)) varied = true;
  }
  if (!varied) return false;
  const last = v(before, n - 1);
  const atEnd = (page: Page): Set<string> => {
    const ids = new Set<string>();
    for (let i = n - 1; i >= 0 && v(page, i) === last; i--) ids.add(page.ids[i]!);
    return ids;
  };
  const end = atEnd(before);
  const endNow = atEnd(now);
  return end.size === endNow.size && [...end].every((id) => endNow.has(id));
}

/** A whole listing's pass whose `total` fell while calls of equal times lay at its page edges. */
export function fellAmongTies(pass: PassResult, order: OrderObserver): boolean {
  return !pass.stoppedEarly && pass.end.totalFell && order.tiesNearEdges;
}

/**
 * The count and total a pass is proved with. `union`: distinct calls over every pass, which is the
 * count when nothing came or went (a second pass makes up for what the first missed). Among ties at
 * page edges, each removal may have been counted (TotalTrail), and each call that arrived below the
 * cursor while the last pass was read was (PassResult.rose): the union less those, or the last
 * pass's own count less its arrivals when no total fell through it, whichever is larger (each alone
 * counts only calls the service held all along). `moved`: calls moved up onto the first page
 * (removals with `total` kept level by arrivals, which no total shows): the last pass's own count.
 */
export function countProof(pass: PassResult, order: OrderObserver, union: number, trail: TotalTrail, moved: boolean): CountProof {
  if (pass.stoppedEarly) return { count: union, total: undefined, shortfall: undefined };
  // Read oldest first, the calls that arrived are at the end, listed, and in the last total: held
  // against that, they count on both sides.
  const arrivalsListed = pass.end.totalRose && order.tiesNearEdges && order.sortedBy?.order === 'oldest-first';
  const total = arrivalsListed ? pass.end.lastTotal : pass.end.minTotal;
  // Calls that arrived before the last pass are in its totals; those that arrived below its cursor
  // while it was read are not, and it counted them.
  const rose = arrivalsListed ? 0 : pass.rose;
  const own = pass.distinct - rose;
  const unionLess = union - trail.fell - rose;
  let count = union;
  if (moved) count = fellAmongTies(pass, order) ? Math.min(own, unionLess) : own;
  else if (order.tiesNearEdges && (trail.fell > 0 || rose > 0)) count = Math.max(unionLess, fellAmongTies(pass, order) ? 0 : own);
  return { count, total, shortfall: total === undefined ? undefined : Math.max(0, total - count) };
}

/**
 * Distinct calls counted beyond what the service's totals allow: the last total of the pass (calls
 * that arrived included) and the calls removed since they may have been counted (TotalTrail.fell).
 * More than that, the total is no count of what was listed: a call removed above the cursor and
 * another arriving below it between the same two requests keep `total` level while the first,
 * counted, stands in for a call the shift skipped (4 of 100 whole listings ok with a call missing),
 * and a total that is each page's own row count holds nothing (4 of 100; hostile probe, session 24).
 * The listing is read again, that pass counted on its own; an excess then too is not proved.
 */
export function excessOver(count: number, pass: PassResult, trail: TotalTrail): number {
  const last = pass.end.lastTotal;
  if (pass.stoppedEarly || last === undefined) return 0;
  return Math.max(0, count - last - trail.fell);
}

/**
 * Entries a first pass served past the totals (excessOver, a call listed twice counted twice): a
 * total understated by exactly the calls that ties split across a page boundary hid (others shown
 * twice in their place) let the distinct count meet it, ok with calls missing (68 of 2,000 with no
 * churn at all: helper-76's churn model, --total low). Such a total is no count of the listing.
 */
export function servedOver(pass: PassResult, trail: TotalTrail): number {
  return excessOver(pass.served, pass, trail);
}
