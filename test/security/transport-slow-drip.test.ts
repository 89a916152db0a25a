import { afterEach, describe, expect } from 'vitest';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';
import { getCallId, startRawProxy, type RawProxy } from './transport-proxy.js';

/**
 * Issue 13, point 7: requestTimeoutMs bounds a whole attempt, headers and body. undici's own
 * timeouts only bound the wait for headers and between two chunks, so a server dripping one byte
 * every 200 ms held a request (and the run) for as long as it liked.
 */
describe('a body dripped one byte every 200 ms', () => {
  test.override({ simApps: [{ calls: 6 }] });
  let proxy: RawProxy;
  let target: string | undefined;

  test.beforeEach(async ({ sim }) => {
    proxy = await startRawProxy(sim.url, async (req, res, pass) => {
      const id = getCallId(req.url);
      if (!id) return false;
      target ??= id;
      if (id !== target) return false;
      const body = (await pass()).body.toString('utf8');
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      let closed = false;
      res.on('close', () => (closed = true));
      // The whole body, a byte at a time: each gap is far below requestTimeoutMs, the sum far above.
      for (let i = 0; i < body.length && !closed; i++) {
        res.write(body[i]);
        await new Promise((r) => setTimeout(r, 200));
      }
      if (!closed) res.end();
      return true;
    });
  });
  afterEach(async () => {
    await proxy.close();
  });

  it('fails each attempt as a timeout, is retried, and the run ends partial with the call on the retry list', async ({ sim, database: db }) => {
    const settings = testSettings(sim, ['app1'], db, { detailFetch: 'always', requestTimeoutMs: 1_000, maxAttempts: 2 });
    const apps = settings.apps.map((a) => ({ ...a, callsBaseUrl: `${proxy.url}/app1.call-us/v3`, chatBaseUrl: `${proxy.url}/app1.api-us/v3` }));
    const r = (await syncWith({ ...settings, apps })).results[0]!;
    expect(target).toBeDefined();
    expect(r.status, r.error).toBe('partial');
    // Retried: both attempts were made, each cut by the deadline.
    expect(proxy.urls.filter((u) => getCallId(u) === target).length).toBe(2);
    await withStore(db, async (s) => {
      const retries = await s.db.selectFrom('detail_retries').select(['session_id', 'reason']).execute();
      expect(retries).toEqual([{ session_id: target, reason: 'get_failed' }]);
      const run = await s.db.selectFrom('sync_runs').select(['status', 'error']).executeTakeFirstOrThrow();
      expect(run.status).toBe('partial');
    });
  }, 60_000);
});
