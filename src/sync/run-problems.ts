import type { GroupSyncResult } from './sync-groups.js';
import type { AppSyncResult } from './sync-result.js';

/** What an app's run found that it could not prove, gathered after its listing, follow-ups and members. */
export interface RunFindings {
  /** Why the listing is not proved complete (the watermark stays). */
  listingProblem: string | undefined;
  result: Pick<AppSyncResult, 'unreadCalls' | 'firstUnread' | 'disputedCalls' | 'firstDisputed' | 'failedCalls' | 'failedKept' | 'notFoundListed' | 'firstNotFoundListed'>;
  /** The first list entry of this run that did not parse. */
  unread: { key: string; reason: string } | undefined;
  /** A call older than settleDays whose details changed (SettleAudit.oldChange). */
  oldChange: string | undefined;
  settleDays: number;
  nowSeconds: number;
  /** Media read as none and not proved (MediaStatements.contradiction). */
  media: string | undefined;
  groups: Pick<GroupSyncResult, 'unreadMembers' | 'firstUnread' | 'failed'>;
}

/** One line for each thing the run could not prove; any makes the run partial (sync-app). */
export function runProblems(f: RunFindings): string[] {
  const { result: r, groups } = f;
  const problems: string[] = [];
  if (f.listingProblem) problems.push(`${f.listingProblem}; the watermark was not moved, the next run lists again (run \`callsync verify\` to see what differs)`);
  // Also when this run's listing showed no unreadable entry: a call on the retry list for one
  // (listed by an earlier run, now older than the window) that Get Call still cannot give left the
  // run ok, the call missing from `calls` for good (hostile probe, session 24).
  if (r.unreadCalls > 0) {
    const first = f.unread ? `${f.unread.key.slice(0, 80)}: ${f.unread.reason.slice(0, 200)}` : (r.firstUnread ?? '');
    problems.push(`${r.unreadCalls} listed call(s) could be read neither from List Calls nor from Get Call (first: ${first}); they are kept aside in rejected_records, not in calls, and read again on the next run`);
  }
  if (f.oldChange) {
    // The day after the window's older edge: --until is exclusive, and the calls of that day's
    // first hours are past settleDays too (round 12, L2).
    const until = new Date((f.nowSeconds - f.settleDays * 86_400 + 86_400) * 1000).toISOString().slice(0, 10);
    problems.push(`details of a call that ended more than settleDays (${f.settleDays}) ago changed at the service, its list entry unchanged (${f.oldChange}): other calls of that age may hold stale details, which no run reads again; \`callsync sync --refetch --since <first day that matters> --until ${until}\` re-reads them; if the service settles calls that late, raise settleDays past it`);
  }
  if (f.media) problems.push(f.media);
  if (r.disputedCalls > 0) problems.push(`${r.disputedCalls} call(s) were listed twice with different entries while Get Call left out what the entries state (first: ${r.firstDisputed ?? ''}); they are stored as listed with detail_error, on the retry list, and the next run that lists them asks for them with that entry alone`);
  if (r.notFoundListed > 0) problems.push(`${r.notFoundListed} listed call(s) Get Call says do not exist (ERR_CALL_SESSION_NOT_FOUND) have list entries without all their details (first: ${r.firstNotFoundListed ?? ''}); they are stored as listed with not_found_at, and asked for again on each run whose listing shows them`);
  const failedListed = r.failedCalls - r.failedKept;
  if (failedListed > 0) problems.push(`${failedListed} call(s) lack details: Get Call gave nothing usable, so they are stored as listed (calls.detail_error says why) and on the retry list, fetched again by later runs`);
  // A call asked for again (live, retried, unsettled, audited) has no entry to store: its stored rows stay.
  if (r.failedKept > 0) problems.push(`${r.failedKept} call(s) asked for again lack details: Get Call gave nothing usable this time, so what earlier runs stored of them is kept (calls.detail_error says where that is only their list entry), and they are on the retry list, fetched again by later runs (\`callsync sync --full\` reads changed list entries again, \`--refetch --since … --until …\` every entry of a window)`);
  if (groups.unreadMembers > 0) {
    problems.push(`${groups.unreadMembers} group member record(s) could not be read (first: ${(groups.firstUnread ?? '').slice(0, 200)}); they are kept aside in rejected_records, not in group_members, and read again when the group is next synced`);
  }
  if (groups.failed.length > 0) problems.push(`members of ${groups.failed.length} group(s) could not be synced completely (${groups.failed[0]}${groups.failed.length > 1 ? ', …' : ''}); their stored members were kept, retried on the next run`);
  return problems;
}
