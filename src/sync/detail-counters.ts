import type { AppSyncResult } from './sync-result.js';

/** What a DetailFetcher counts in a run: these figures of its app's result (see AppSyncResult for each). */
export type DetailCounters = Pick<
  AppSyncResult,
  'detailFetches' | 'notFound' | 'failedCalls' | 'failedKept' | 'unreadCalls' | 'firstUnread' | 'disputedCalls' | 'firstDisputed' | 'notFoundListed' | 'firstNotFoundListed'
>;
