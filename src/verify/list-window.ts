import type { CallsApi } from '../source/calls-api.js';
import { CallListing, type ListingOutcome } from '../source/paginate-calls.js';
import { ListingError } from '../source/listing-problem.js';
import { entryTimes } from '../source/listing-evidence.js';

export type { ListingOutcome };

/**
 * The time of a list entry that does not parse, read leniently as the listing reads it (startedAt,
 * else initiatedAt, else endedAt; null when none is a usable time).
 */
export function looseEntryTime(raw: unknown): number | null {
  const t = entryTimes(raw);
  return t.startedAt ?? t.initiatedAt ?? t.endedAt;
}

export interface ListWindowOptions {
  /** maxPagesPerRun: an endless listing fails instead of filling memory. */
  maxPages?: number;
  /** Unix seconds: the listing may stop once it has seen newest-first order and a whole page older. */
  lowerBound?: number;
  /** Checked between pages (requests in flight are stopped by the HTTP client's own signal). */
  signal?: AbortSignal;
}

export interface WindowListing {
  outcome: ListingOutcome;
  /**
   * Every call in the window was listed: the listing is complete, or it stopped at the window's
   * lower bound having observed newest-first order (the outcome then says complete: false, since
   * the whole listing was not read, but nothing in the window can lie beyond that page).
   */
  windowComplete: boolean;
  /** The pages were read to their end (or to the lower bound): absent calls are really absent. */
  readToEnd: boolean;
}

/**
 * Lists the app's calls page by page into `onPage` (entries as received, unparsed) and returns what
 * the listing could prove about itself. The one place verify touches the listing: the rest reads
 * entries and an outcome. Pages may hold calls outside the window, and (after a second pass over a
 * listing that fell short) the same call twice; the caller filters and de-duplicates.
 * A listing that proves itself inconsistent is an incomplete outcome, not an error; service errors
 * (auth, plan, retries exhausted) are thrown.
 */
export async function listWindow(
  api: CallsApi,
  pageSize: number,
  opts: ListWindowOptions,
  onPage: (entries: readonly unknown[]) => Promise<void>,
): Promise<WindowListing> {
  const listing = new CallListing(api, pageSize, { ...(opts.maxPages !== undefined ? { maxPages: opts.maxPages } : {}), ...(opts.lowerBound !== undefined ? { lowerBound: opts.lowerBound } : {}) });
  try {
    for await (const page of listing.pages()) {
      if (opts.signal?.aborted) return { outcome: { ...listing.outcome(), complete: false, problem: 'stopped by a signal before the listing was read to its end' }, windowComplete: false, readToEnd: false };
      await onPage(page.entries);
    }
  } catch (err) {
    if (err instanceof ListingError) return { outcome: { ...listing.outcome(), complete: false, problem: err.message }, windowComplete: false, readToEnd: false };
    throw err;
  }
  const outcome = listing.outcome();
  return { outcome, windowComplete: outcome.complete || (outcome.stoppedEarly && outcome.problem === undefined), readToEnd: true };
}
