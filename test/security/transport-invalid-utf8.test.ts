import { afterEach, describe, expect } from 'vitest';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';
import { getCallId, startRawProxy, type RawProxy } from './transport-proxy.js';

/**
 * Issue 13, point 14: a body is decoded as strict UTF-8. A lone 0xFF inside a string used to become
 * U+FFFD without a word, and the damaged text was stored as what the service sent. Now such a body
 * is a transport error: retried, and when it stays damaged the call is left on the retry list.
 */
describe('a Get Call body with a lone 0xFF byte inside a string', () => {
  test.override({ simApps: [{ calls: 6 }] });
  let proxy: RawProxy;
  let target: string | undefined;

  test.beforeEach(async ({ sim }) => {
    proxy = await startRawProxy(sim.url, async (req, res, pass) => {
      const id = getCallId(req.url);
      if (!id) return false;
      target ??= id;
      if (id !== target) return false;
      const body = (await pass()).body;
      const open = Buffer.from('{"data":{');
      const at = body.indexOf(open) + open.length;
      const damaged = Buffer.concat([body.subarray(0, at), Buffer.from('"note":"caf'), Buffer.from([0xff]), Buffer.from('",'), body.subarray(at)]);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': damaged.length });
      res.end(damaged);
      return true;
    });
  });
  afterEach(async () => {
    await proxy.close();
  });

  it('is never stored with U+FFFD: retried, then the call is on the retry list and the run is partial', async ({ sim, database: db }) => {
    const settings = testSettings(sim, ['app1'], db, { detailFetch: 'always', maxAttempts: 3 });
    const apps = settings.apps.map((a) => ({ ...a, callsBaseUrl: `${proxy.url}/app1.call-us/v3`, chatBaseUrl: `${proxy.url}/app1.api-us/v3` }));
    const r = (await syncWith({ ...settings, apps })).results[0]!;
    expect(target).toBeDefined();
    expect(r.status, r.error).toBe('partial');
    expect(proxy.urls.filter((u) => getCallId(u) === target).length).toBe(3);
    await withStore(db, async (s) => {
      const rows = await s.db.selectFrom('call_payloads').select('raw_json').execute();
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row.raw_json).not.toContain('\uFFFD');
      const rejected = await s.db.selectFrom('rejected_records').select('payload').execute();
      for (const row of rejected) expect(row.payload).not.toContain('\uFFFD');
      const retries = await s.db.selectFrom('detail_retries').select(['session_id', 'reason']).execute();
      expect(retries).toEqual([{ session_id: target, reason: 'get_failed' }]);
    });
  }, 60_000);
});
