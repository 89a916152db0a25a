import { expect } from 'vitest';
import type { AppSyncResult } from '../../src/sync/sync-result.js';
import { onlyUnreadCallsError } from './unread-line.js';

/**
 * A run whose one problem is `n` listed calls the service serves in a form no client can read (the
 * simulator's `malformedCalls`): kept aside in rejected_records, so the run is partial, saying so in
 * one line and nothing else.
 */
export function expectOnlyUnreadCalls(r: AppSyncResult, n: number): void {
  expect(r.status, r.error).toBe('partial');
  expect(r.unreadCalls).toBe(n);
  expect(r.error).toMatch(onlyUnreadCallsError(n));
}

