/**
 * What a paged listing proves about itself, from the pages alone. Pure: no I/O, no clock.
 *
 * The service documents neither the sort order of List Calls nor what its pagination fields mean
 * (api-facts.md), so nothing here is assumed: the order is observed from the entries' times, the
 * end of the listing needs two pieces of evidence that agree, and the number of distinct calls seen
 * is counted exactly so that it can be held against the `total` the service reports.
 */

import type { Pagination } from './schemas.js';

export { ORDER_KEYS, OrderObserver, type EntryTimes, type ListingOrder, type OrderKey } from './listing-order.js';
import type { EntryTimes } from './listing-order.js';
import { NO_WHOLE_FIGURES, type WholeFigures } from './whole-figures.js';
import type { DistinctIds } from './distinct-ids.js';
export { DistinctIds } from './distinct-ids.js';

/** A usable time: a positive number (or numeric string) of unix seconds or milliseconds; else null. */
export function timeValue(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n) || n <= 0) return null;
  // The second the instant is in, as the stored times have it (schemas.ts unixSeconds; probe64 F1).
  return Math.floor(n > 1e11 ? n / 1000 : n);
}

export function entryTimes(raw: unknown): EntryTimes {
  const r = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  return { startedAt: timeValue(r.startedAt), initiatedAt: timeValue(r.initiatedAt), endedAt: timeValue(r.endedAt) };
}

/** What the service's pagination said on one page (undefined fields were absent or unusable). */
export interface PageMeta {
  total?: number | undefined;
  totalPages?: number | undefined;
}

/**
 * The size to ask a listing's second page at again, when its first page came back smaller than
 * perPage and its total does not say that was all: whether the server's offsets step by the size
 * served or the perPage asked, the pages cannot tell (stepping by perPage, the rows between pages
 * are never served: a hostile fake, 75 of 250 calls read, ok). Undefined when no check is due.
 * CallListing and the group members' listing both ask it.
 */
export function servedSizeToCheck(first: { count: number; total: number | undefined } | undefined, perPage: number): number | undefined {
  return first !== undefined && first.count < perPage && first.total !== first.count ? first.count : undefined;
}

/** The reported figures of a page, when they are whole numbers ≥ 0 (anything else counts as not reported). */
export function pageMeta(p: Pagination | undefined, served: number): PageMeta {
  const ok = (n: number | undefined): number | undefined => (n !== undefined && Number.isFinite(n) && n >= 0 ? Math.floor(n) : undefined);
  // A zero beside entries is no count (the published members example says `total: 0` with five
  // rows): taken as one, a server that ignores `page` looked "past its end" on page 2 and lost every
  // member after page 1. A page count of its own beside it still counts: dropped too, a server
  // hiding rows after paging them with `total: 0` and honest `total_pages: 5` ended ok with 45 of
  // 101 calls (probe round 17 c), where without the zero the page count showed the loss.
  const total = ok(p?.total);
  const totalPages = ok(p?.total_pages);
  // One page beside a zero total was worked out from it, and is no figure either.
  if (served > 0 && (total === 0 || totalPages === 0)) return totalPages !== undefined && totalPages > 1 ? { totalPages } : {};
  return { total, totalPages };
}

/**
 * Whether a List Calls page's total is its own count, not the listing's: it equals the entries the
 * page served, and the calls listed before it with this page's new ones are more. A server stating
 * each page's own count (50, 50, 30) read as calls removed: the listing stepped back, saw a short
 * page before full ones, and every run on a clean server ended partial. A total that fell with
 * removals equals the page's count only by chance (and is then read as absent: the listing is
 * proved as one without a total, never taken as whole by it).
 */
export function totalIsPagesOwn(entries: readonly unknown[], total: number | undefined, listed: DistinctIds): boolean {
  if (total === undefined || entries.length === 0 || total !== entries.length) return false;
  let fresh = 0;
  for (const id of entryIds(entries, 'sessionId')) if (!listed.has(id)) fresh++;
  return listed.count + fresh > total;
}

/**
 * The ids of a page's entries (`key`: sessionId, uid); a number is its text (a member's uid may be
 * written so), and an entry without one gets a key of its place on the page and its text. Keyed by
 * the page's number as well, a page served again (a server ignoring `page`) never looked repeated,
 * and the listing ran on to maxPagesPerRun, hours at a plan's rate (probe round 17 c).
 */
export function entryIds(entries: readonly unknown[], key: string): string[] {
  return entries.map((e, i) => {
    const id = e && typeof e === 'object' ? (e as Record<string, unknown>)[key] : undefined;
    return typeof id === 'string' ? id : typeof id === 'number' && Number.isFinite(id) ? String(id) : `\u0000#${i}:${JSON.stringify(e) ?? 'undefined'}`;
  });
}

/** Whether a page holds exactly the ids of the page before it. */
export function sameIds(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a !== undefined && a.length === b.length && a.every((id, i) => id === b[i]);
}

/** One page as the end-of-listing rules see it. */
export interface PageFacts {
  /** 0-based position of the page in the listing (however the service numbers its pages). */
  index: number;
  count: number;
  meta: PageMeta;
  /** The page holds exactly the ids of the page read before it. */
  repeatsPrevious: boolean;
  /** The page begins with the id the page read before it ended with (pages that overlap by one). */
  overlapsPrevious?: boolean;
}

/** Whether `ids` begins with the last id of `previous` (see PageFacts.overlapsPrevious). */
export function overlapsPrevious(previous: readonly string[] | undefined, ids: readonly string[]): boolean {
  return previous !== undefined && previous.length > 0 && ids.length > 0 && ids[0] === previous[previous.length - 1];
}

export type EndDecision =
  | { kind: 'next' }
  | { kind: 'end'; why: string }
  /** Evidence says more pages follow an empty one: ask it again once, then look one further. */
  | { kind: 'recheck-empty' }
  | { kind: 'broken'; why: string };

/**
 * The end-of-listing rules (issue 11): trust no single field.
 * - A full page never ends the listing (a total_pages that understates would lose the rest).
 * - A short page ends it only when every reported figure agrees (the distinct calls seen reach
 *   `total`, the pages read reach `total_pages`), at least one was reported, and it is not the
 *   first page; otherwise the next page is asked, and an empty one ends it.
 * - "Short" is measured against what pages really carry (the largest page seen), never against
 *   `per_page`, which some servers echo from the request whatever they cap pages at.
 * - A page past the reported end that repeats the last page is the end (a server that ignores
 *   `page` answers like that: the vendor's own published example does); a repeat before the end is
 *   broken paging.
 * - An empty page right after a short page ends it; after a full page it is asked again, and the
 *   page after it looked at, before it is taken for the end.
 */
export class ListingEnd {
  #largest = 0;
  #previousShort = false;
  #minTotal: number | undefined;
  /** The largest `total` reported: a listing that showed more distinct entries than even that was given a total too low to prove anything. */
  #maxTotal: number | undefined;
  #lastTotalPages: number | undefined;
  /** A page reported a `total` above its own count (see provedWhole). */
  #totalAbovePage = false;
  /** Pages with entries read up to (0-based index + 1 of the furthest). */
  #pagesReached = 0;
  /** The size of the page read last, and the smallest of those another page followed. */
  #lastCount: number | undefined;
  #smallestFollowed = Number.POSITIVE_INFINITY;
  /** The first page (1-based) that came empty, asked twice, while the page after it held entries. */
  #gapAt: number | undefined;
  /** The first page (1-based) that began with the previous page's last entry. */
  #overlapAt: number | undefined;
  #lastTotal: number | undefined;
  #totalFell = false;
  #totalRose = false;

  /**
   * `what`: the listing as messages name it; `noun`: what its entries are. `servedElsewhere`: the
   * largest page the same endpoint served to another listing of this run (0: none known);
   * `wholeElsewhere`: which figures other listings of this run proved whole (provedWhole), for a
   * listing that learns from others (members); undefined for one that does not (List Calls).
   */
  constructor(
    private readonly requestedSize: number,
    private readonly what = 'List Calls',
    private readonly noun = 'calls',
    private readonly servedElsewhere = 0,
    private readonly wholeElsewhere?: WholeFigures,
  ) {}

  /**
   * Which figures this listing, read to its end with `distinct` entries, showed to be whole-listing
   * figures (WholeFigures): the caller's to pass on to later listings of the same endpoint.
   */
  provedWhole(distinct: number): WholeFigures {
    const total = this.#minTotal;
    const pages = this.#lastTotalPages;
    return {
      total: this.#totalAbovePage && total !== undefined && distinct >= total && !this.#understated(distinct),
      pages: pages !== undefined && pages > 1 && this.#pagesReached >= pages,
    };
  }

  /**
   * Whether this listing reported a total, and each figure it reported is of a kind another listing
   * proved whole. A page count alone is not enough: servers compute it from the perPage asked, so a
   * group capped at 10 of its 25 says `total_pages: 1` beside a perPage of 1000 (a hostile fake:
   * 10 of 25 stored for every later group, ok).
   */
  #figuresProvedElsewhere(): boolean {
    const whole = this.wholeElsewhere ?? NO_WHOLE_FIGURES;
    return this.#minTotal !== undefined && whole.total && (this.#lastTotalPages === undefined || whole.pages);
  }

  /** The smallest `total` reported in this listing (totals grow as calls arrive and fall as they go). */
  get minTotal(): number | undefined {
    return this.#minTotal;
  }

  get largestPage(): number {
    return this.#largest;
  }

  /**
   * Whether `total` fell from one page to a later one: calls were removed while the listing was
   * read. A removed call already listed still counts among the distinct calls seen, so it can make
   * up for a call the listing lost, and the count no longer proves anything on its own (see
   * CallListing, ties split across pages).
   */
  get totalFell(): boolean {
    return this.#totalFell;
  }

  /** Whether `total` rose from one page to a later one: calls arrived while the listing was read. */
  get totalRose(): boolean {
    return this.#totalRose;
  }

  /** The `total` the last page that reported one gave. */
  get lastTotal(): number | undefined {
    return this.#lastTotal;
  }

  #note(meta: PageMeta): void {
    if (meta.total !== undefined) {
      if (this.#lastTotal !== undefined && meta.total < this.#lastTotal) this.#totalFell = true;
      if (this.#lastTotal !== undefined && meta.total > this.#lastTotal) this.#totalRose = true;
      this.#lastTotal = meta.total;
      this.#minTotal = this.#minTotal === undefined ? meta.total : Math.min(this.#minTotal, meta.total);
      this.#maxTotal = this.#maxTotal === undefined ? meta.total : Math.max(this.#maxTotal, meta.total);
    }
    if (meta.totalPages !== undefined) this.#lastTotalPages = meta.totalPages;
  }

  /**
   * Whether every reported figure says the listing holds no more than what was seen, and one was
   * reported. A figure the listing already exceeds (more entries than any total, more pages than
   * total_pages) counts nothing and agrees with nothing: each page stating its own figures (total
   * its rows, total_pages 1) "agreed" with a short page 2 from which a member was hidden, and 19
   * of 48 members were stored, ok (probe69).
   */
  #figuresAgree(pagesRead: number, distinct: number): boolean {
    const total = this.#understated(distinct) ? undefined : this.#minTotal;
    const pages = this.#lastTotalPages !== undefined && this.#lastTotalPages >= pagesRead ? this.#lastTotalPages : undefined;
    if (total === undefined && pages === undefined) return false;
    if (total !== undefined && distinct < total) return false;
    if (pages !== undefined && pagesRead < pages) return false;
    return true;
  }

  /**
   * Whether more distinct entries were listed than any total the service reported: a total that low
   * proves nothing (a server ignoring `page` with `total: 49` beside 50 listed, or overlapping pages
   * with `total: 10`, ended ok with calls missing: probe round 17 c).
   */
  #understated(distinct: number): boolean {
    return this.#maxTotal !== undefined && distinct > this.#maxTotal;
  }

  /**
   * Whether the pages read are already past the reported end; after a full page, only by a figure
   * shown to count more than a page (a page count above 1, or a total above a page's count, here
   * or, for members, elsewhere in the run).
   */
  #pastReportedEnd(pagesRead: number, distinct: number, full: boolean): boolean {
    const total = this.#understated(distinct) ? undefined : this.#minTotal;
    const pages = this.#lastTotalPages;
    const totalCounts = !full || this.#totalAbovePage || (this.wholeElsewhere?.total ?? false);
    return (pages !== undefined && pagesRead > pages && (!full || pages > 1)) || (totalCounts && total !== undefined && distinct >= total && pagesRead > 1);
  }

  /** Decides after a non-empty page; `distinct` counts this page's ids too. */
  afterPage(page: PageFacts, distinct: number): EndDecision {
    this.#note(page.meta);
    if (page.meta.total !== undefined && page.meta.total > page.count) this.#totalAbovePage = true;
    const pagesRead = page.index + 1;
    this.#pagesReached = Math.max(this.#pagesReached, pagesRead);
    if (page.repeatsPrevious) {
      // A full page repeated counts as past the end only by figures shown to count more than a page
      // (#pastReportedEnd): a server paging by cursor alone answers every page with the first, and
      // figures describing that answer (total = its count, total_pages 1) put the repeat "past the
      // end": 50 of 130 calls, 1,000 of 1,500 members stored, ok (hostile fakes).
      if (this.#pastReportedEnd(pagesRead, distinct, page.count >= this.requestedSize)) return { kind: 'end', why: `page ${pagesRead} lies past the reported end and repeats the previous page` };
      return {
        kind: 'broken',
        why: `${this.what} page ${pagesRead} repeats the previous page exactly${this.#minTotal === undefined && this.#lastTotalPages === undefined ? ' and the service reports no total' : ' before the reported end'}; the service's paging cannot be followed, so the listing cannot be proved complete`,
      };
    }
    if (page.overlapsPrevious) this.#overlapAt ??= pagesRead;
    if (this.#lastCount !== undefined) this.#smallestFollowed = Math.min(this.#smallestFollowed, this.#lastCount);
    this.#lastCount = page.count;
    const reference = page.index === 0 ? this.requestedSize : this.#largest;
    this.#largest = Math.max(this.#largest, page.count);
    const short = page.count < reference;
    this.#previousShort = short;
    // A short first page proves nothing about the page size (a server capping pages below what
    // was asked, with a total that agrees, looks exactly like a small listing): the page after it
    // is asked, one request, and an empty or repeated answer ends the listing.
    if (short && page.index > 0 && this.#figuresAgree(pagesRead, distinct)) return { kind: 'end', why: 'a short page where the reported total and page count agree' };
    // Unless the same endpoint served a larger page to another listing of this run: the server's
    // page size is not this page's, so figures that agree with it are believed, once another
    // listing showed those figures counting more than a page (wholeElsewhere). Believed on the
    // larger page alone, a constant `total: 10` beside groups capped at 10 members a page stored 10
    // of each group's 25, ok (a hostile fake); members' figures are not to be trusted alone
    // (api-facts.md: the published example says `total: 0` beside five rows).
    if (short && page.index === 0 && page.count < this.servedElsewhere && this.#figuresAgree(pagesRead, distinct) && !this.#understated(distinct) && this.#figuresProvedElsewhere()) {
      return { kind: 'end', why: 'a short first page where the reported figures agree, and a larger page served to another listing' };
    }
    return { kind: 'next' };
  }

  /**
   * Whether the listing, `distinct` entries so far, ends before the page about to be read: the last
   * page read was short, a total was reported, and every reported figure agrees (a page count
   * alone may be the perPage asked's).
   */
  endsBeforeHere(distinct: number): boolean {
    return this.#previousShort && this.#minTotal !== undefined && this.#figuresAgree(this.#pagesReached, distinct) && !this.#understated(distinct);
  }

  /**
   * The empty page at `index`, asked twice, was followed by a page with entries: the listing goes on
   * past it, and whatever that page holds was never read (see unproved).
   */
  emptyFollowed(index: number): void {
    this.#gapAt ??= index + 1;
  }

  /** The page emptyFollowed saw, in words; undefined when none came empty between pages with entries. */
  gapLine(): string | undefined {
    return this.#gapAt === undefined ? undefined : `${this.what} page ${this.#gapAt} came empty twice between pages with ${this.noun} (what that page holds was never listed)`;
  }

  /** Decides after an empty page at `index` (a recheck is the caller's: ask again, then look one further). */
  afterEmpty(index: number, meta: PageMeta): EndDecision {
    // A zero once entries have been seen is no count, as beside entries (pageMeta): the empty page
    // after a members listing that says `total: 0` (as published) made 0 the smallest total, and
    // every count then "added up" (a member lost to overlapping pages, ok: a hostile fake).
    this.#note(this.#largest > 0 && (meta.total === 0 || meta.totalPages === 0) ? {} : meta);
    if (index === 0) return { kind: 'end', why: 'the first page is empty' };
    if (this.#previousShort) return { kind: 'end', why: 'an empty page after a short one' };
    // After a full page an empty one may be a glitch, whatever the figures say (figures that
    // understate agree with it: soak seed 2001 lost every later page that way). Asking again and
    // looking one page further costs two requests, only when the listing ends on a full page.
    return { kind: 'recheck-empty' };
  }

  /**
   * Without a total, `total_pages` is the only figure to hold the listing against: pages that end
   * (an empty page after a short one, say) before the reported count are a listing read in part —
   * a server that hides rows after paging them, or pages numbered in a way the first pages did not
   * show. With a total, the distinct count is the proof and total_pages is not consulted (servers
   * compute it from the requested page size, not the served one). Says why, for a listing read to
   * its end, when it proves nothing.
   */
  unproved(distinct: number): string | undefined {
    // A total below the distinct count listed is no total (#understated): the same checks apply.
    // A page count beyond both the pages read and what the total fills at the size served (and one
    // more: `floor(total / size) + 1`, a common slip, on an exact multiple) disagrees with the
    // total: a first page stating its own count (45) beside total_pages 3, the rest hidden after
    // paging, ended ok with 45 of 139 calls (session 29's probe).
    if (this.#minTotal !== undefined && !this.#understated(distinct)) {
      const reported = this.#lastTotalPages;
      if (reported === undefined || this.#pagesReached >= reported || reported <= 1 + Math.ceil(this.#maxTotal! / Math.max(1, Math.min(this.requestedSize, this.#largest)))) return undefined;
      return `${this.what} reported ${reported} pages and a total of ${this.#maxTotal}, but its pages ended after ${this.#pagesReached}`;
    }
    const noTotal = this.#maxTotal === undefined ? 'no total' : `a total (${this.#maxTotal}) below the ${distinct} ${this.noun} it listed`;
    // A page shorter than others that more pages followed: a server that hides rows after paging
    // them (offsets still step by perPage) serves exactly that, and nothing else can show it
    // without a total (69 of 500 lost while ok, found by a hostile fake).
    if (this.#smallestFollowed < this.#largest) return `${this.what} served a page of ${this.#smallestFollowed} ${this.noun} before pages of ${this.#largest} and reports ${noTotal} (rows hidden after paging cannot be ruled out)`;
    // Offsets one short repeat the last entry of a page at the start of the next and never show
    // the one that belongs there, the same on every read (a hostile fake: 119 of 120 calls, ok).
    if (this.#overlapAt !== undefined) return `${this.what} page ${this.#overlapAt} began with the entry the page before it ended with and reports ${noTotal} (pages that overlap skip an entry)`;
    // An empty page that more pages followed is a page that failed to come (a proxy's 404 twice in
    // a row, read as an empty page): its calls were never listed, and without a total nothing
    // counts them (a hostile fake: 25 of 137 calls missing, ok). With a total the count shows it.
    if (this.#gapAt !== undefined) return `${this.gapLine()} and reports ${noTotal}`;
    const reported = this.#lastTotalPages;
    if (reported === undefined || this.#pagesReached >= reported) return undefined;
    return `${this.what} reported ${reported} pages and ${noTotal}, but its pages ended after ${this.#pagesReached}`;
  }

  /**
   * Whether the distinct calls seen account for what the service reported; undefined when it
   * reported no total (nothing to hold the count against: the end of the listing is the proof).
   */
  shortfall(distinct: number): number | undefined {
    if (this.#minTotal === undefined) return undefined;
    return Math.max(0, this.#minTotal - distinct);
  }
}
