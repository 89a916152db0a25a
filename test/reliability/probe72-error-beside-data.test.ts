import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectExactOrLoud, expectLoudNamesProblem } from '../helpers/exact-or-loud.js';
import { syncWith, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';
import { relay, startProxy, type SeenRequest } from './support/servers.js';

/**
 * probe72 F3: a 200 whose body states an error was that error only when it had no `data`. One
 * that states an error beside an empty `data` (`{"data":[],"error":{"code":"ERR_INTERNAL",…}}`, a
 * gateway's answer, or a GraphQL-style partial one) was taken for its data: a service answering
 * every List Calls request so ended ok with none of its 40 calls stored.
 */
const ERROR_BESIDE_EMPTY = JSON.stringify({ data: [], error: { code: 'ERR_INTERNAL', message: 'database timeout' }, meta: { pagination: { total: 0, count: 0, per_page: 25, current_page: 1, total_pages: 0 } } });
const tmp = tempDir('callsync-probe72-beside-');
afterAll(() => tmp.cleanup());

const isList = (req: SeenRequest): boolean => /\/v3\/calls$/.test(new URL(req.url, 'http://fake').pathname);
const isGet = (req: SeenRequest): boolean => /\/v3\/calls\/[^/]+$/.test(new URL(req.url, 'http://fake').pathname);

async function run(name: string, answerError: (req: SeenRequest) => boolean, answer = { status: 200, body: ERROR_BESIDE_EMPTY }): Promise<{ status: string; error?: string; diff: string[] }> {
  const service = await FakeCallsService.start({ calls: 40, ongoing: 0, seed: 7203, listMinimal: true });
  const proxy = await startProxy(service.url, async (req, pass) => (answerError(req) ? answer : relay(await pass())));
  try {
    const db = join(tmp.dir, `${name}.db`);
    const r = (await syncWith(settingsAt({ callsBaseUrl: `${proxy.url}/app1.call-us/v3`, chatBaseUrl: `${proxy.url}/app1.api-us/v3` }, db, { pageSize: 25, maxAttempts: 3 }))).results[0]!;
    return { status: r.status, ...(r.error !== undefined ? { error: r.error } : {}), diff: await callsVsTruth(service, db) };
  } finally {
    await proxy.close();
    await service.close();
  }
}

describe('probe72: a 200 stating an error beside its data', () => {
  it('on every List Calls request: the run is not ok (it was ok with no call stored)', async () => {
    const r = await run('every-list', isList);
    expect(r.diff).toHaveLength(40);
    expect(r.status).not.toBe('ok');
    expectLoudNamesProblem(r);
    expect(r.error).toMatch(/ERR_INTERNAL/);
  });

  it('once per kind of request (a list page, a Get Call): asked again, the run is ok and exact', async () => {
    let list = 0;
    let get = 0;
    const r = await run('once', (req) => (isList(req) && ++list === 2) || (isGet(req) && ++get === 3));
    expect([list > 2, get > 3]).toEqual([true, true]);
    expect(expectExactOrLoud(r, r.diff)).toBe('exact');
  });
});

/**
 * A 202 (Accepted: taken, not answered yet; a gateway queueing the request, a service computing
 * it) was read like a 200: a proxy answering every List Calls request `202 {"data":[]}` ended the
 * run ok with none of the service's 40 calls stored (probe72 left it). A 202 is no answer: asked
 * again, and still no answer when retries run out, the app fails naming it.
 */
describe('a 202 Accepted is not an answer', () => {
  const ACCEPTED = { status: 202, body: JSON.stringify({ data: [], meta: { pagination: { total: 0, count: 0, per_page: 25, current_page: 1, total_pages: 0 } } }) };

  it('on every List Calls request: the run is not ok, and says HTTP 202', async () => {
    const r = await run('accepted-every-list', isList, ACCEPTED);
    expect(r.diff).toHaveLength(40);
    expect(r.status).not.toBe('ok');
    expectLoudNamesProblem(r);
    expect(r.error).toMatch(/HTTP 202/);
  });

  it('once: asked again, the run is ok and exact', async () => {
    let list = 0;
    const r = await run('accepted-once', (req) => isList(req) && ++list === 2, ACCEPTED);
    expect(list).toBeGreaterThan(2);
    expect(expectExactOrLoud(r, r.diff)).toBe('exact');
  });
});
