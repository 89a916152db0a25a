import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, describe, expect } from 'vitest';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';
import { getCallId, isListPage, startRawProxy, type RawProxy } from './transport-proxy.js';

/**
 * Issue 13, point 6: a response body is capped at maxResponseBytes while it streams. The service
 * (or anything in between) sending an endless body used to be read whole into memory, once per
 * attempt. Now reading stops at the cap, the request is not retried, and a Get Call that hit it is
 * left on the retry list; a List page that hit it fails the run loudly.
 */
const CAP = 256 * 1024;

/** Streams `{"data":{"pad":"aaaa…", <the rest of the real body>` chunked (no content-length), with
 * backpressure, until `total` pad bytes are out or the client hangs up; returns the bytes written. */
async function streamPadded(res: ServerResponse, upstream: string, openAt: string, total: number): Promise<number> {
  const at = upstream.indexOf(openAt) + openAt.length;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  let closed = false;
  res.on('close', () => (closed = true));
  let written = 0;
  const write = async (chunk: string): Promise<void> => {
    if (closed) return;
    written += chunk.length;
    if (res.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  };
  await write(`${upstream.slice(0, at)}"pad":"`);
  const block = 'a'.repeat(64 * 1024);
  for (let sent = 0; sent < total && !closed; sent += block.length) await write(block);
  await write(`",${upstream.slice(at)}`);
  if (!closed) res.end();
  return written;
}

describe('a response body larger than maxResponseBytes', () => {
  test.override({ simApps: [{ calls: 10 }] });
  let proxy: RawProxy | undefined;

  afterAll(async () => {
    await proxy?.close();
  });

  const viaRaw = (url: string): { callsBaseUrl: string; chatBaseUrl: string } => ({ callsBaseUrl: `${url}/app1.call-us/v3`, chatBaseUrl: `${url}/app1.api-us/v3` });

  it('from Get Call: reading stops near the cap, one attempt, the call goes to the retry list', async ({ sim, dir }) => {
    let target: string | undefined;
    let served = 0;
    const HUGE = 48 * 1024 * 1024;
    proxy = await startRawProxy(sim.url, async (req, res, pass) => {
      const id = getCallId(req.url);
      if (!id) return false;
      target ??= id;
      if (id !== target) return false;
      const up = (await pass()).body.toString('utf8');
      served = await streamPadded(res, up, '{"data":{', HUGE);
      return true;
    });
    const db = join(dir, 'get.db');
    const settings = testSettings(sim, ['app1'], db, { detailFetch: 'always', maxResponseBytes: CAP, maxAttempts: 4 });
    const r = (await syncWith({ ...settings, apps: settings.apps.map((a) => ({ ...a, ...viaRaw(proxy!.url) })) })).results[0]!;
    await proxy.close();
    proxy = undefined;

    expect(target).toBeDefined();
    expect(r.status, r.error).toBe('partial');
    expect(r.error ?? '').not.toMatch(/maxResponseBytes.*List/);
    // Exactly one request for that call: an oversize body is not asked for again.
    expect(served).toBeGreaterThan(0);
    // The client hung up long before the 48 MB were out (what is left is socket buffers).
    expect(served).toBeLessThan(16 * 1024 * 1024);
    await withStore(db, async (s) => {
      const retries = await s.db.selectFrom('detail_retries').select(['session_id', 'reason']).execute();
      expect(retries).toEqual([{ session_id: target, reason: 'get_failed' }]);
      const others = await s.db.selectFrom('calls').select('session_id').where('session_id', '!=', target!).execute();
      expect(others.length).toBe(9);
    });
  }, 60_000);

  it('counts only one Get attempt for the oversize call', async ({ sim, dir }) => {
    let target: string | undefined;
    proxy = await startRawProxy(sim.url, async (req, res, pass) => {
      const id = getCallId(req.url);
      if (!id) return false;
      target ??= id;
      if (id !== target) return false;
      await streamPadded(res, (await pass()).body.toString('utf8'), '{"data":{', 3 * CAP);
      return true;
    });
    const db = join(dir, 'get-once.db');
    const settings = testSettings(sim, ['app1'], db, { detailFetch: 'always', maxResponseBytes: CAP, maxAttempts: 4 });
    const r = (await syncWith({ ...settings, apps: settings.apps.map((a) => ({ ...a, ...viaRaw(proxy!.url) })) })).results[0]!;
    const asked = proxy.urls.filter((u) => getCallId(u) === target).length;
    await proxy.close();
    proxy = undefined;
    expect(r.status, r.error).toBe('partial');
    expect(asked).toBe(1);
    await withStore(db, async (s) => {
      const retries = await s.db.selectFrom('detail_retries').select('session_id').execute();
      expect(retries.map((x) => x.session_id)).toEqual([target]);
    });
  }, 60_000);

  it('from a List page (3× the cap): one request, and the run fails loudly naming maxResponseBytes', async ({ sim, dir }) => {
    proxy = await startRawProxy(sim.url, async (req, res, pass) => {
      if (!isListPage(req.url)) return false;
      await streamPadded(res, (await pass()).body.toString('utf8'), '{', 3 * CAP);
      return true;
    });
    const db = join(dir, 'list.db');
    const settings = testSettings(sim, ['app1'], db, { maxResponseBytes: CAP, maxAttempts: 4 });
    const r = (await syncWith({ ...settings, apps: settings.apps.map((a) => ({ ...a, ...viaRaw(proxy!.url) })) })).results[0]!;
    const listAsked = proxy.urls.filter(isListPage).length;
    await proxy.close();
    proxy = undefined;
    expect(r.status).toBe('failed');
    expect(r.error).toMatch(/maxResponseBytes \(262144 bytes\)/);
    expect(listAsked).toBe(1);
  }, 60_000);
});
