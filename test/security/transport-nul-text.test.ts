import { afterEach, describe, expect } from 'vitest';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';
import { relay, startProxy, viaProxy, type TestServer } from '../reliability/support/servers.js';

/**
 * Issue 13, point 8: PostgreSQL text cannot hold U+0000, so one call with a NUL in a string failed
 * the whole page's transaction, on every run. NUL is now refused at the boundary like any other
 * unstorable text: that record goes to rejected_records with a reason, the rest of the page is stored.
 */
const CALLS = 12;

describe.each(await testDialects())('a call whose receiver holds a NUL character (%s)', (dialect) => {
  test.override({ dialect, simApps: [{ calls: CALLS }] });
  let proxy: TestServer;
  let target: string | undefined;

  test.beforeEach(async ({ sim }) => {
    proxy = await startProxy(sim.url, async (_req, pass) => {
      const up = await pass();
      let text = up.body.toString('utf8');
      target ??= /"sessionId":"([^"]+)"/.exec(text)?.[1];
      if (target) {
        const at = text.indexOf(`"sessionId":"${target}"`);
        if (at >= 0) text = text.slice(0, at) + text.slice(at).replace(/("receiver":"[^"]*)"/, '$1\\u0000x"');
      }
      return relay(up, text);
    });
  });
  afterEach(async () => {
    await proxy.close();
  });

  it('is rejected with a reason; the other calls are stored and the run does not fail', async ({ sim, database: db }) => {
    const settings = testSettings(sim, ['app1'], db);
    const apps = settings.apps.map((a) => ({ ...a, ...viaProxy(proxy.url, 'app1') }));
    const r = (await syncWith({ ...settings, apps })).results[0]!;
    expect(target).toBeDefined();
    expect(r.status, r.error).not.toBe('failed');
    await withStore(db, async (s) => {
      const calls = await s.db.selectFrom('calls').select('session_id').execute();
      expect(calls.map((c) => c.session_id)).not.toContain(target);
      expect(calls).toHaveLength(CALLS - 1);
      const rejected = await s.db.selectFrom('rejected_records').select(['record_key', 'reason']).execute();
      expect(rejected.some((x) => x.record_key.includes(target!) && /NUL/.test(x.reason))).toBe(true);
    });
  }, 60_000);
});
