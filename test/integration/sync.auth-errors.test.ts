import { describe, expect } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { syncWith, TEST_KEY } from '../helpers/harness.js';

const WRONG_KEY = 'wrong-key-5f2b8c1d9e7a';

const dialects = await testDialects();

describe.each(dialects)('auth errors stop only their app [%s]', (dialect) => {
  test.override({ dialect, simApps: [{ appId: 'good', calls: 300 }, { appId: 'badkey', calls: 300 }, { appId: 'readonly', calls: 300, keyScope: 'readOnly' }, { appId: 'nokey', calls: 50 }] });

  it('names the app and region, never prints the key, makes one request, and lets the other apps finish', async ({ sim, database }) => {
    const app = (appId: string, apiKeyEnv: string) => ({ appId, region: 'us', apiKeyEnv, requestsPerMinute: 100_000, ...sim.baseUrls(appId) });
    const settings = resolveConfig(
      { database, apps: [app('good', 'KEY_GOOD'), app('badkey', 'KEY_BAD'), app('readonly', 'KEY_GOOD'), app('nokey', 'KEY_MISSING')] },
      { KEY_GOOD: TEST_KEY, KEY_BAD: WRONG_KEY, CALLSYNC_RETRY_BASE_MS: '5' },
    );
    const summary = await syncWith(settings);
    expect(summary.ok).toBe(false);
    const by = new Map(summary.results.map((r) => [r.appId, r]));
    expect(by.get('good')!.status).toBe('ok');
    expect(by.get('good')!.callsSeen).toBe(sim.truth('good').calls.size + sim.truth('good').notFound.size + sim.truth('good').malformed.size);

    const bad = by.get('badkey')!;
    expect(bad.status).toBe('failed');
    expect(bad.error).toMatch(/^app badkey \(us\): .*AUTH_ERR_APIKEY_NOT_FOUND/);
    expect(bad.requests).toBe(1);
    expect(sim.stats('badkey').list + sim.stats('badkey').get).toBe(1);

    const ro = by.get('readonly')!;
    expect(ro.status).toBe('failed');
    expect(ro.error).toMatch(/^app readonly \(us\): .*AUTH_ERR_NO_ACCESS/);
    expect(ro.requests).toBe(1);

    const none = by.get('nokey')!;
    expect(none.status).toBe('failed');
    expect(none.error).toBe("app nokey (us): environment variable KEY_MISSING is not set; export the app's REST API key (fullAccess) in it");
    expect(none.requests).toBe(0);

    for (const r of summary.results) {
      expect(JSON.stringify(r)).not.toContain(TEST_KEY);
      expect(JSON.stringify(r)).not.toContain(WRONG_KEY);
    }
  });
});
