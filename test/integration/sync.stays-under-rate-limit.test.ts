import { describe, expect } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, syncWith, TEST_KEY, testConfig, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

describe('the request pacer keeps an app under its rate limit', () => {
  const LIMIT = 3000; // requests per minute, enforced by the simulator over a sliding minute
  test.override({ simApps: [{ calls: 120 }], simFaults: { rateLimitPerMinute: LIMIT } });

  it('sees no 429 when requestsPerMinute matches the plan', async ({ sim, database: db }) => {
    const settings = resolveConfig(
      { ...testConfig(sim, ['app1'], db, { detailFetch: 'always', concurrency: 8 }), apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: LIMIT, ...sim.baseUrls('app1') }] },
      { [KEY_ENV]: TEST_KEY },
    );
    const r = (await syncWith(settings)).results[0]!;
    expect(r.status).toBe('ok');
    expect(r.requests).toBeGreaterThan(120);
    expect(sim.stats('app1').http429).toBe(0);
    expect(r.rateLimited).toBe(0);
    await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
  });
});
