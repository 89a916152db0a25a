import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultProfile, Simulator } from '../../src/simulator/index.js';
import { integrityProblems } from '../helpers/db-dump.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';
import { FaultMatrix, settingsAt } from './support/matrix.js';
import { seededRandom } from './support/prng.js';
import { startProxy, startServer, viaProxy, type Reply } from './support/servers.js';

/**
 * Fault matrix, part 2: transport faults. Each row injects one fault at a high rate into a sync of
 * 200 calls that fetches every call (so every kind of request meets it), and ends equal to the
 * ground truth with a bounded number of requests: the client's count and the server's are printed.
 */
const matrix = new FaultMatrix('Fault matrix: transport faults (200 calls, detailFetch always, concurrency 4)');
const CALLS = 200;
const SETTINGS = { detailFetch: 'always', concurrency: 4, maxAttempts: 10 } as const;

/** Requests a run may take: the clean run's plus three times the expected retries, plus slack. */
function boundFor(clean: number, faultRate: number): number {
  return Math.ceil(clean * (1 + 3 * faultRate)) + 8;
}

describe('fault matrix: transport faults end in the ground truth with bounded requests', () => {
  const tmp = tempDir('callsync-transport-');
  let clean = 0;

  beforeAll(async () => {
    const sim = await startTestSim([{ calls: CALLS }]);
    try {
      const r = (await syncWith(testSettings(sim, ['app1'], join(tmp.dir, 'clean.db'), SETTINGS))).results[0]!;
      expect(r.status).toBe('ok');
      clean = r.requests;
    } finally {
      await sim.close();
    }
  });
  afterAll(() => {
    console.log(matrix.format());
    tmp.cleanup();
  });

  const simRows: [name: string, faults: FaultProfile, rate: number, extra: Record<string, unknown>][] = [
    ['5xx (500/502/503) with HTML bodies, 20 %', { http5xxRate: 0.2 }, 0.2, {}],
    ['connection reset before any answer, 20 %', { resetRate: 0.2 }, 0.2, {}],
    ['answer stalls past requestTimeoutMs (250 ms), 5 %', { stallRate: 0.05, stallMs: 3_000 }, 0.05, { requestTimeoutMs: 250 }],
    ['200 with truncated JSON (half the body, then the socket closes), 20 %', { truncateRate: 0.2 }, 0.2, {}],
  ];
  for (const [name, faults, rate, extra] of simRows) {
    it(name, async () => {
      let sim: Simulator | undefined;
      try {
        sim = await startTestSim([{ calls: CALLS }], { ...faults, faultSeed: 11 });
        const db = join(tmp.dir, `${name.replace(/\W+/g, '-')}.db`);
        const r = (await syncWith(testSettings(sim, ['app1'], db, { ...SETTINGS, ...extra }))).results[0]!;
        const stats = sim.stats('app1');
        const bound = boundFor(clean, rate);
        matrix.add(name, [r], { clean, bound, serverRequests: stats.requests, end: 'truth' });
        expect(r.status, r.error).toBe('ok');
        expect(r.retries).toBeGreaterThan(0);
        expect(r.requests).toBeLessThanOrEqual(bound);
        await withStore(db, async (s) => {
          expect(await diffAgainstTruth(s.db, sim!.truth('app1'))).toEqual([]);
          expect(await integrityProblems(s.db)).toEqual([]);
        });
      } finally {
        await sim?.close();
      }
    });
  }

  it('error bodies that are not JSON (text, empty, broken JSON, HTML labelled JSON), 20 %', async () => {
    const name = 'error bodies that are not JSON (text, empty, broken JSON, HTML labelled JSON), 20 %';
    const sim = await startTestSim([{ calls: CALLS }]);
    const random = seededRandom(5);
    const junk: Reply[] = [
      { status: 500, headers: { 'content-type': 'text/plain' }, body: 'upstream exploded' },
      { status: 502, headers: { 'content-type': 'text/plain' }, body: '' },
      { status: 503, body: '{"error":{"code":"ERR_UNAVAILA' },
      { status: 504, body: '<html><body><h1>504 Gateway Time-out</h1></body></html>' },
      { status: 429, headers: { 'content-type': 'text/html' }, body: '<p>slow down</p>' },
    ];
    let injected = 0;
    const proxy = await startProxy(sim.url, async (req, pass) => {
      if (random() < 0.2) {
        injected++;
        return junk[Math.floor(random() * junk.length)]!;
      }
      const up = await pass();
      return { status: up.status, headers: { 'content-type': String(up.headers['content-type'] ?? '') }, body: up.body };
    });
    try {
      const db = join(tmp.dir, 'not-json.db');
      const r = (await syncWith(settingsAt(viaProxy(proxy.url, 'app1'), db, SETTINGS))).results[0]!;
      const bound = boundFor(clean, 0.2);
      matrix.add(name, [r], { clean, bound, serverRequests: proxy.requests.length, end: 'truth' });
      expect(r.status, r.error).toBe('ok');
      expect(injected).toBeGreaterThan(0);
      expect(r.retries).toBe(injected);
      expect(r.requests).toBeLessThanOrEqual(bound);
      await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('401 on every request, with an HTML body and no error code: stops after one request', async () => {
    const name = '401 on every request (HTML body, no code), maxAttempts 10';
    const server = await startServer(() => ({ status: 401, headers: { 'content-type': 'text/html' }, body: '<html><body>401 Authorization Required</body></html>' }));
    try {
      const db = join(tmp.dir, 'unauthorized.db');
      const r = (await syncWith(settingsAt(viaProxy(server.url, 'app1'), db, SETTINGS))).results[0]!;
      matrix.add(name, [r], { clean: null, bound: 1, serverRequests: server.requests.length, end: 'failed, nothing written' });
      expect(r.status).toBe('failed');
      expect(r.error).toMatch(/^app app1 \(us\): List Calls (page 1|\(first page, asked as page=0\)) failed: HTTP 401; check the app ID, region and the REST API key/);
      expect(r.requests).toBe(1);
      expect(r.retries).toBe(0);
      expect(server.requests).toHaveLength(1);
      await withStore(db, async (s) => {
        expect(await s.db.selectFrom('calls').select('session_id').execute()).toEqual([]);
        expect(await s.db.selectFrom('sync_state').selectAll().execute()).toEqual([]);
      });
    } finally {
      await server.close();
    }
  });
});
