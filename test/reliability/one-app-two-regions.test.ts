import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { syncWith, tempDir, withStore, KEY_ENV, TEST_KEY } from '../helpers/harness.js';
import { FakeCallsService, type Wire } from './support/fake-calls-service.js';

/**
 * One appId configured for two regions (two hosts, two listings): the watermark, live-call tracking
 * and the retry list are kept per app AND region, so one region's live calls are never asked of the
 * other region's host (which would answer not-found and mark them gone).
 */
describe('one appId in two regions', () => {
  it('keeps each region apart: no live call of one region is fetched from the other', async () => {
    const tmp = tempDir('callsync-regions-');
    const us = await FakeCallsService.start({ calls: 60, seed: 11, ongoing: 2 });
    const eu = await FakeCallsService.start({ calls: 40, seed: 29, ongoing: 2 });
    try {
      const database = join(tmp.dir, 'regions.db');
      const app = (region: 'us' | 'eu', fake: FakeCallsService) => ({ appId: 'app1', region, apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...fake.baseUrls('app1') });
      const settings = resolveConfig({ database, apps: [app('us', us), app('eu', eu)], pageSize: 50, requestTimeoutMs: 2_000 }, { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' });
      for (let run = 1; run <= 3; run++) {
        const summary = await syncWith(settings);
        expect(summary.results.map((r) => [r.region, r.status, r.notFound]), `run ${run}`).toEqual([['us', 'ok', 0], ['eu', 'ok', 0]]);
      }
      await withStore(database, async (s) => {
        const byRegion = await s.db.selectFrom('calls').select(['region', 'not_found_at']).execute();
        expect(byRegion.filter((c) => c.region === 'us')).toHaveLength(us.calls.length);
        expect(byRegion.filter((c) => c.region === 'eu')).toHaveLength(eu.calls.length);
        expect(byRegion.every((c) => c.not_found_at === null)).toBe(true);
        // Nothing was asked of the wrong host: no call waits on the retry list.
        expect(await s.db.selectFrom('detail_retries').selectAll().execute()).toEqual([]);
        const state = await s.db.selectFrom('sync_state').select(['app_id', 'region']).orderBy('region').execute();
        expect(state).toEqual([{ app_id: 'app1', region: 'eu' }, { app_id: 'app1', region: 'us' }]);
      });
    } finally {
      await us.close();
      await eu.close();
      tmp.cleanup();
    }
  });

  it("one region's entries kept aside as unreadable do not stand in for the other region's calls", async () => {
    // The incremental proof holds the service's total against the calls stored plus the listed
    // entries kept aside in rejected_records. Counted for the appId in every region, a `us` entry
    // nothing could read made up for an `eu` call backdated beyond the window: eu ok, the call missing.
    const tmp = tempDir('callsync-regions-rejected-');
    let victim = '';
    // `status: 3`: a number where the schema takes text, in the entry and in Get Call's answer.
    const spoil = (w: Wire): Wire => (w.sessionId === victim ? { ...w, status: 3 } : w);
    const us = await FakeCallsService.start({ calls: 30, seed: 11, ongoing: 0, listEntry: spoil, getAnswer: spoil });
    const eu = await FakeCallsService.start({ calls: 30, seed: 29, ongoing: 0 });
    try {
      victim = us.calls[3]!.sessionId;
      const database = join(tmp.dir, 'regions-rejected.db');
      const app = (region: 'us' | 'eu', fake: FakeCallsService) => ({ appId: 'app1', region, apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...fake.baseUrls('app1') });
      const settings = resolveConfig({ database, apps: [app('us', us), app('eu', eu)], pageSize: 10, lookbackHours: 2, requestTimeoutMs: 2_000 }, { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' });
      const first = await syncWith(settings);
      expect(first.results.map((r) => [r.region, r.status])).toEqual([['us', 'partial'], ['eu', 'ok']]);
      // Among the oldest calls, pages beyond the first (the window's) page.
      const backdated = eu.addCall({ at: [...eu.calls].sort((a, b) => b.initiatedAt - a.initiatedAt)[25]!.initiatedAt - 1, status: 'ended' });
      const second = await syncWith(settings);
      const euRun = second.results.find((r) => r.region === 'eu')!;
      const stored = await withStore(database, ({ db }) => db.selectFrom('calls').select('session_id').where('session_id', '=', backdated.sessionId).execute());
      expect([euRun.status, stored.length], euRun.error ?? '').toEqual(['ok', 1]);
    } finally {
      await us.close();
      await eu.close();
      tmp.cleanup();
    }
  });
});
