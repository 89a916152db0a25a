import type { RetryEvent } from '../source/http-client.js';
import type { ListingOrder } from '../source/listing-evidence.js';

export interface SyncOptions {
  readonly runId: string;
  /** Ignore the watermark and list everything (the watermark is recomputed from what is listed). */
  readonly full?: boolean;
  /** Backfill window (unix seconds, [since, until)); does not move the watermark. */
  readonly since?: number;
  readonly until?: number;
  /** Stops the sync between pages (SIGTERM): pages already fetched are written, the run is 'interrupted'. */
  readonly signal?: AbortSignal;
  /** Get Call for every listed call in the window, changed or not (`sync --refetch`, a repair tool). */
  readonly refetch?: boolean;
  /** Called after each page is written (progress displays). */
  readonly onProgress?: (p: AppProgress) => void;
  /** Called before each wait for a retried request (progress displays, retry warnings). */
  readonly onRetry?: (e: AppRetryEvent) => void;
}

/** A request of one app is being retried. */
export interface AppRetryEvent extends RetryEvent {
  appId: string;
  region: string;
}

export type SyncMode = 'full' | 'incremental' | 'backfill';

export interface AppProgress {
  appId: string;
  region: string;
  pages: number;
  callsSeen: number;
  detailFetches: number;
  /** Calls the listing says it holds (pagination.total of the latest page), when it says. */
  listedTotal: number | undefined;
}

export interface AppSyncResult {
  appId: string;
  region: string;
  mode: SyncMode;
  status: 'ok' | 'partial' | 'failed' | 'interrupted';
  pages: number;
  callsSeen: number;
  callsWritten: number;
  callsFromList: number;
  detailFetches: number;
  /**
   * Of detailFetches, calls stored from their list entry asked for again after the listing, to
   * compare with that entry (detailFetch auto: ListAudit.unreachedDraws, LISTED_AUDITS).
   */
  auditedAgain: number;
  notFound: number;
  rejected: number;
  failedCalls: number;
  /** Of failedCalls, calls asked for again without a list entry: what was stored of them is kept. */
  failedKept: number;
  /**
   * Listed calls whose entry did not parse and that Get Call could not supply in a form that parses
   * either (or that could not be asked for: no usable sessionId): kept aside in rejected_records,
   * not in `calls`. The run is partial when there are any.
   */
  unreadCalls: number;
  /** The first of them Get Call was asked for, as `sessionId: why` (the listing's own first unreadable entry is named before it). */
  firstUnread?: string | undefined;
  /**
   * Calls listed twice in the run with different entries whose Get Call answer left out what the
   * entries state (which of them is current is not known): stored as listed with detail_error, on
   * the retry list; the run is partial, naming the first.
   */
  disputedCalls: number;
  firstDisputed?: string | undefined;
  /**
   * Listed calls Get Call answered ERR_CALL_SESSION_NOT_FOUND for whose list entry is not the whole
   * call (no participants or minutes, say): stored as listed with not_found_at, their details
   * missing while the listing shows them; the run is partial, naming the first.
   */
  notFoundListed: number;
  firstNotFoundListed?: string | undefined;
  groupsSynced: number;
  membersSynced: number;
  groupsNotFound: number;
  requests: number;
  requestsByKind: Record<string, number>;
  retries: number;
  rateLimited: number;
  durationMs: number;
  /** Time spent inside write transactions (wall clock, ms): how much of the run the database took. */
  writeMs: number;
  /** The order List Calls was observed in during this run. */
  listingOrder?: ListingOrder;
  /** Distinct calls listed, and the smallest total the service reported. */
  listedDistinct?: number;
  reportedTotal?: number | undefined;
  /** Whether the listing was proved whole (to its end, or the incremental window). */
  listingComplete?: boolean;
  error?: string;
}

export function emptyResult(appId: string, region: string, mode: SyncMode): AppSyncResult {
  return {
    appId, region, mode, status: 'ok', pages: 0, callsSeen: 0, callsWritten: 0, callsFromList: 0, detailFetches: 0, auditedAgain: 0, notFound: 0, rejected: 0,
    failedCalls: 0, failedKept: 0, unreadCalls: 0, disputedCalls: 0, notFoundListed: 0, groupsSynced: 0, membersSynced: 0, groupsNotFound: 0, requests: 0, requestsByKind: {}, retries: 0, rateLimited: 0, durationMs: 0, writeMs: 0,
  };
}
