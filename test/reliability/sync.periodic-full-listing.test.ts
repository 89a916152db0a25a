import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * An incremental run proves the window by ids and the rest by counts: the service's total against
 * the calls stored. Calls removed at the service stay stored, so two removals and two calls added
 * with times beyond the window balance the count (found by a hostile-fake probe, 2026-11-26: ok
 * with both calls missing). Counts cannot tell, so a full listing is due every fullSyncEveryDays;
 * these tests make it due the way a user's database gets there (its last full sync a week back).
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;
const DAY = 86_400;

const tmp = tempDir('callsync-periodic-full-');
afterAll(() => tmp.cleanup());

async function storedIds(database: string): Promise<Set<string>> {
  return withStore(database, async ({ db }) => new Set((await db.selectFrom('calls').select('session_id').execute()).map((x) => x.session_id)));
}

/** Two old calls removed and two added five days back (beyond the 24 h window): the total is unchanged. */
function churnBeyondWindow(service: FakeCallsService): string[] {
  const now = Math.floor(Date.now() / 1000);
  const oldest = [...service.calls].sort((a, b) => a.initiatedAt - b.initiatedAt).slice(0, 2);
  for (const c of oldest) service.calls.splice(service.calls.indexOf(c), 1);
  return [service.addCall({ at: now - 5 * DAY, status: 'ended' }).sessionId, service.addCall({ at: now - 5 * DAY - 600, status: 'ended' }).sessionId];
}

describe('a full listing is due every fullSyncEveryDays', () => {
  it('removals balancing calls backdated beyond the window: the run after the due date lists everything, finds them, ok', async () => {
    const service = await FakeCallsService.start({ seed: 31, calls: 300, ongoing: 0 });
    try {
      const database = join(tmp.dir, 'due.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const first = await syncWith(settings);
      expect(first.results[0]).toMatchObject({ mode: 'full', status: 'ok' });

      const added = churnBeyondWindow(service);
      // The last full listing is six days old: not due; the window checks out by count.
      await withStore(database, ({ db }) => db.updateTable('sync_state').set({ last_full_sync_at: Math.floor(Date.now() / 1000) - 6 * DAY }).execute());
      const second = await syncWith(settings);
      expect(second.results[0]!.mode).toBe('incremental');

      await withStore(database, ({ db }) => db.updateTable('sync_state').set({ last_full_sync_at: Math.floor(Date.now() / 1000) - 7 * DAY - 60 }).execute());
      const third = await syncWith(settings);
      expect(third.results[0]).toMatchObject({ mode: 'full', status: 'ok' });
      const stored = await storedIds(database);
      expect(added.filter((id) => !stored.has(id))).toEqual([]);
      expect(service.calls.filter((c) => !stored.has(c.sessionId))).toEqual([]);
      // The full listing starts the period again: the next run is incremental.
      const state = await withStore(database, ({ db }) => db.selectFrom('sync_state').select('last_full_sync_at').executeTakeFirstOrThrow());
      expect(state.last_full_sync_at).toBeGreaterThan(Math.floor(Date.now() / 1000) - 120);
      expect((await syncWith(settings)).results[0]!.mode).toBe('incremental');
    } finally {
      await service.close();
    }
  });

  it('fullSyncEveryDays 0: every run lists everything', async () => {
    const service = await FakeCallsService.start({ seed: 32, calls: 120, ongoing: 0 });
    try {
      const database = join(tmp.dir, 'every.db');
      const settings = settingsAt(service.baseUrls('app1'), database, { ...SETTINGS, fullSyncEveryDays: 0 });
      await syncWith(settings);
      const added = churnBeyondWindow(service);
      const again = await syncWith(settings);
      expect(again.results[0]).toMatchObject({ mode: 'full', status: 'ok' });
      const stored = await storedIds(database);
      expect(added.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      await service.close();
    }
  });
});
