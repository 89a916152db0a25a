// No vitest import here: scripts/soak.ts reaches it through test/reliability/support/crash.ts, outside the test runner.
/** A run's error that names `n` unreadable listed calls (any number when omitted) and nothing else. */
export function onlyUnreadCallsError(n?: number): RegExp {
  return new RegExp(`^app \\S+ \\(\\w+\\): ${n ?? '\\d+'} listed call\\(s\\) could be read neither from List Calls nor from Get Call \\(first: .*\\); they are kept aside in rejected_records, not in calls, and read again on the next run$`);
}
