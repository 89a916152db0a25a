/** What a DetailFetcher counts in a run (see AppSyncResult for each figure). */
export interface DetailCounters {
  detailFetches: number;
  notFound: number;
  /** Calls whose details Get Call could not supply in this run: stored from the list where listed, on the retry list. */
  failedCalls: number;
  /**
   * Of failedCalls, those asked for again without a list entry (live, retried, unsettled or audited
   * calls): what an earlier run stored of them is kept as it was, not replaced by a list entry.
   */
  failedKept: number;
  /** Calls whose list entry did not parse and whose Get Call answer gave nothing usable either (see AppSyncResult). */
  unreadCalls: number;
  /** The first of them, as `sessionId: why Get Call gave nothing usable`. */
  firstUnread?: string | undefined;
  /** Calls listed twice with different entries whose answer left out what only an entry states (see AppSyncResult). */
  disputedCalls: number;
  firstDisputed?: string | undefined;
  /** Listed calls Get Call says do not exist whose entry leaves details out (see AppSyncResult). */
  notFoundListed: number;
  firstNotFoundListed?: string | undefined;
}
