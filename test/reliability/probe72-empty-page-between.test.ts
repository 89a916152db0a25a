import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectExactOrLoud, expectLoudNamesProblem } from '../helpers/exact-or-loud.js';
import { syncWith, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';
import { relay, startProxy, type Reply } from './support/servers.js';

/**
 * probe72 F2: a List Calls page from the third on that fails to come twice in a row (a proxy's 404
 * during a deploy, or Django REST framework's "Invalid page." from a replica behind) reads as an
 * empty page; asked again and empty again, the page after it is looked at, and when that one holds
 * calls the listing went on from there. The empty page's calls were never listed, and a listing
 * without a total had nothing to count them by: 25 of 137 calls missing, status ok.
 */
const NGINX: Reply = { status: 404, headers: { 'content-type': 'text/html' }, body: '<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>' };
const DRF: Reply = { status: 404, body: '{"detail":"Invalid page."}' };
const tmp = tempDir('callsync-probe72-gap-');
afterAll(() => tmp.cleanup());

describe('probe72: a page refused twice between pages with calls, in a listing without a total', () => {
  for (const [name, refusal] of [['a proxy\'s HTML 404', NGINX], ['"Invalid page." (404)', DRF]] as const) {
    for (const page of [3, 4]) {
      it(`${name} for page ${page}, twice: the run is exact and ok, or says it is not`, async () => {
        // 137 calls, 25 a page: six pages, total_pages stated, no total.
        const service = await FakeCallsService.start({ calls: 137, ongoing: 0, seed: 7202, total: 'absent' });
        let refused = 0;
        const proxy = await startProxy(service.url, async (req, pass) => {
          const u = new URL(req.url, 'http://fake');
          if (/\/v3\/calls$/.test(u.pathname) && Number(u.searchParams.get('page')) === page && refused < 2) {
            refused++;
            return refusal;
          }
          return relay(await pass());
        });
        try {
          const db = join(tmp.dir, `${name.replace(/\W+/g, '-')}-${page}.db`);
          const r = (await syncWith(settingsAt({ callsBaseUrl: `${proxy.url}/app1.call-us/v3`, chatBaseUrl: `${proxy.url}/app1.api-us/v3` }, db, { pageSize: 25, maxAttempts: 3 }))).results[0]!;
          expect(refused).toBe(2);
          expectExactOrLoud(r, await callsVsTruth(service, db), name);
          expectLoudNamesProblem(r, name);
        } finally {
          await proxy.close();
          await service.close();
        }
      });
    }
  }
});

/**
 * The same page stepped over in an incremental run's window: a window has no count of its own, so
 * without a total the 25 new calls that page held were missing from a run that ended ok.
 */
describe('probe72: a page refused twice inside an incremental run\'s window, no total', () => {
  it('the window is not taken as proved: the run is exact and ok, or says it is not', async () => {
    const service = await FakeCallsService.start({ calls: 137, ongoing: 0, seed: 7205, total: 'absent', spanHours: 2000 });
    let armed = false;
    let refused = 0;
    const proxy = await startProxy(service.url, async (req, pass) => {
      const u = new URL(req.url, 'http://fake');
      if (armed && /\/v3\/calls$/.test(u.pathname) && Number(u.searchParams.get('page')) === 2 && refused < 2) {
        refused++;
        return DRF;
      }
      return relay(await pass());
    });
    try {
      const db = join(tmp.dir, 'window.db');
      const settings = settingsAt({ callsBaseUrl: `${proxy.url}/app1.call-us/v3`, chatBaseUrl: `${proxy.url}/app1.api-us/v3` }, db, { pageSize: 25, maxAttempts: 3, lookbackHours: 1 });
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      // 80 new calls: the next run's window spans four pages, the second of which is refused twice.
      for (let i = 0; i < 80; i++) service.addCall({ at: Math.floor(Date.now() / 1000) - 100 - i * 10, status: 'ended' });
      armed = true;
      const r = (await syncWith(settings)).results[0]!;
      expect(refused).toBe(2);
      expectExactOrLoud(r, await callsVsTruth(service, db), 'incremental');
      expectLoudNamesProblem(r, 'incremental');
    } finally {
      await proxy.close();
      await service.close();
    }
  });
});
