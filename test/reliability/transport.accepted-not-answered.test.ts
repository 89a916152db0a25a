import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectExactOrLoud, expectLoudNamesProblem } from '../helpers/exact-or-loud.js';
import { syncWith, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';
import { relay, startProxy, type SeenRequest } from './support/servers.js';

/**
 * A 202 (Accepted: taken, not answered yet; a gateway queueing the request, a service computing
 * it) was read like a 200: a proxy answering every List Calls request `202 {"data":[]}` ended the
 * run ok with none of the service's 40 calls stored (probe72 left it). A 202 is no answer: asked
 * again, and still no answer when retries run out, the app fails naming it.
 */
const EMPTY = JSON.stringify({ data: [], meta: { pagination: { total: 0, count: 0, per_page: 25, current_page: 1, total_pages: 0 } } });
const tmp = tempDir('callsync-accepted-');
afterAll(() => tmp.cleanup());

const isList = (req: SeenRequest): boolean => /\/v3\/calls$/.test(new URL(req.url, 'http://fake').pathname);

async function run(name: string, accept: (req: SeenRequest) => boolean): Promise<{ status: string; error?: string; diff: string[] }> {
  const service = await FakeCallsService.start({ calls: 40, ongoing: 0, seed: 7204 });
  const proxy = await startProxy(service.url, async (req, pass) => (accept(req) ? { status: 202, body: EMPTY } : relay(await pass())));
  try {
    const db = join(tmp.dir, `${name}.db`);
    const r = (await syncWith(settingsAt({ callsBaseUrl: `${proxy.url}/app1.call-us/v3`, chatBaseUrl: `${proxy.url}/app1.api-us/v3` }, db, { pageSize: 25, maxAttempts: 3 }))).results[0]!;
    return { status: r.status, ...(r.error !== undefined ? { error: r.error } : {}), diff: await callsVsTruth(service, db) };
  } finally {
    await proxy.close();
    await service.close();
  }
}

describe('a 202 Accepted is not an answer', () => {
  it('on every List Calls request: the run is not ok, and says HTTP 202', async () => {
    const r = await run('every-list', isList);
    expect(r.diff).toHaveLength(40);
    expect(r.status).not.toBe('ok');
    expectLoudNamesProblem(r);
    expect(r.error).toMatch(/HTTP 202/);
  });

  it('once: asked again, the run is ok and exact', async () => {
    let list = 0;
    const r = await run('once', (req) => isList(req) && ++list === 2);
    expect(list).toBeGreaterThan(2);
    expect(expectExactOrLoud(r, r.diff)).toBe('exact');
  });
});
