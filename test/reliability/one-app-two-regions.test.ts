import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { syncWith, tempDir, withStore, KEY_ENV, TEST_KEY } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';

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
});
