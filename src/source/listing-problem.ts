import { CallsyncError } from '../config/errors.js';

/**
 * The error a listing that cannot be followed throws, and the one line a listing's outcome gives
 * when it could not prove what it read: each reason in the order CallListing weighs them (a count
 * short, an end not proved, calls moved up, a second pass finding calls the first missed).
 */

/** The listing misbehaved in a way paging cannot get past (a page that repeats before the end). */
export class ListingError extends CallsyncError {
  constructor(message: string, code: 'LISTING_INCONSISTENT' | 'GROUP_TOO_LARGE' = 'LISTING_INCONSISTENT') {
    super(code, message);
    this.name = 'ListingError';
  }
}

/** What a listing's passes showed, for its one-line problem (see listingProblem). */
export interface ListingFindings {
  shortfall: number | undefined;
  minTotal: number | undefined;
  distinct: number;
  relisted: boolean;
  unprovedWhy: string | undefined;
  moved: number;
  unstable: number | undefined;
  /** The listing was ordered (by a time), so unstable calls were ties split across pages. */
  tied: boolean;
  /** The passes read a window (stopped at its lower bound), not the whole listing. */
  window: boolean;
  /** Distinct calls counted beyond the last total and the removals it showed (excessOver). */
  excess: number;
  /** The last total reported. */
  lastTotal: number | undefined;
  /** Entries one pass served (a call listed twice counted twice), when they, not the distinct calls, went past the totals (servedOver). */
  served?: number;
}

/** The one line naming what a listing could not prove, or undefined when it proved what it read. */
export function listingProblem(f: ListingFindings): string | undefined {
  const twice = f.relisted ? ' in two passes' : '';
  if (f.shortfall) return `List Calls reported ${f.minTotal} calls but ${f.distinct} distinct calls could be listed${twice} (${f.shortfall} short)`;
  if (f.unprovedWhy !== undefined) return `${f.unprovedWhy}${f.relisted ? ' (in two passes)' : ''}, so the listing cannot be proved complete`;
  if (f.excess) return `List Calls listed ${f.distinct} distinct calls${twice}${f.served ? ` (${f.served} entries in one pass)` : ''} where it reported ${f.lastTotal} at the end (${f.excess} more than its totals allow: calls came and went between the same two requests, or the total is not a count of the listing)${f.unstable ? `, and a second pass found ${f.unstable} call(s) the first missed` : ''}, so the listing cannot be proved complete`;
  if (f.moved) return `List Calls moved calls up onto its first page while it was read${f.relisted ? ' a second time' : ''} (${f.moved}: calls above them were removed, so others may have been skipped), so the listing cannot be proved complete`;
  if (!f.unstable) return undefined;
  if (f.window) return `List Calls split calls of equal times across pages differently on each request: a second pass over the window found ${f.unstable} call(s) the first missed, so the window cannot be proved complete`;
  return `List Calls lists in no stable order${f.tied ? ' (calls of equal times split across pages)' : ''} and reports no total: a second pass found ${f.unstable} call(s) the first missed, so the listing cannot be proved complete`;
}
