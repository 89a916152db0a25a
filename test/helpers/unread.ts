import { expect } from 'vitest';
import type { AppSyncResult } from '../../src/sync/sync-result.js';

/**
 * A run whose one problem is `n` listed calls the service serves in a form no client can read (the
 * simulator's `malformedCalls`): kept aside in rejected_records, so the run is partial, saying so in
 * one line and nothing else.
 */
export function expectOnlyUnreadCalls(r: AppSyncResult, n: number): void {
  expect(r.status, r.error).toBe('partial');
  expect(r.unreadCalls).toBe(n);
  expect(r.error).toMatch(new RegExp(`^app \\S+ \\(\\w+\\): ${n} listed call\\(s\\) could be read neither from List Calls nor from Get Call \\(first: .*\\); they are kept aside in rejected_records, not in calls, and read again on the next run$`));
}
