/** What a listing of List Calls yields and reports (CallListing, in paginate-calls.ts). */
import type { ListingEnd, ListingOrder, OrderKey } from './listing-evidence.js';
import type { Pagination } from './schemas.js';

export interface CallsPage {
  /** The page number as sent to the service. */
  page: number;
  entries: unknown[];
  pagination: Pagination | undefined;
}

export interface ListingOptions {
  /**
   * Unix seconds: the listing may stop at a page whose calls are all older, once it has observed
   * (in this run) that the service lists newest first. Without it, everything is listed.
   */
  readonly lowerBound?: number;
  /** Re-list once when the calls seen fall short of the reported total (default true). */
  readonly relistOnShortfall?: boolean;
  /**
   * List Calls requests this listing may make (config maxPagesPerRun). A server that never ends its
   * listing (every page new ids) would otherwise be paged, and written to disk, without end.
   */
  readonly maxPages?: number;
}

export interface ListingOutcome {
  /** Read to its end, and the distinct calls seen account for the reported total (when one was reported). */
  complete: boolean;
  /** One line naming what could not be proved, when not complete. */
  problem?: string;
  order: ListingOrder;
  /** The time field the order was observed on, when one was. */
  orderKey?: OrderKey;
  /** Distinct calls (session ids) seen over every pass. */
  distinct: number;
  /** The smallest `total` the service reported in the last pass. */
  reportedTotal: number | undefined;
  /** List Calls requests made. */
  pages: number;
  /** Stopped at `lowerBound` (newest first observed) instead of reading to the end. */
  stoppedEarly: boolean;
  /** How the service numbers its pages. */
  pageBase: 0 | 1;
  /** A second pass was made because the first fell short. */
  relisted: boolean;
  /** Why the last pass ended. */
  endedBecause: string;
}

/** One pass over the listing, as CallListing proves it. */
export interface PassResult {
  /** The pass found pages capped below perPage with offsets stepping by perPage: read again at the served size. */
  resized?: boolean;
  end: ListingEnd;
  /** Pages this pass read. */
  pages: number;
  stoppedEarly: boolean;
  why: string;
  /** Distinct calls this pass listed (the first pass: all so far). */
  distinct: number;
  /** Calls on this pass's first page that came up from below the earlier pass's (0 on the first pass). */
  movedIn: number;
  /** Rises of `total` in this pass that arrivals above the cursor do not explain (TotalTrail.roseBelow). */
  rose: number;
  /** Rises of `total` in this pass taken for arrivals above the cursor (riseAbove): its first page, read again, shows them, or the listing is read again. */
  above: number;
  /** Entries on the pages this pass read on new ground, a call listed twice counted twice (excessOver). */
  served: number;
}
