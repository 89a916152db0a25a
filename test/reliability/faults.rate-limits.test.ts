import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { FaultProfile } from '../../src/simulator/index.js';
import { integrityProblems } from '../helpers/db-dump.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';
import { FaultMatrix } from './support/matrix.js';

/**
 * Fault matrix, part 1: 429 storms. Every row ends in a database equal to the simulator's ground
 * truth, within a bounded number of requests. The rows run concurrently: each waits on the server's
 * clock (a sliding window, or 1 s per random 429), not on the CPU. The window is WINDOW_S long, not
 * the service's 60 s (the simulator's rateLimitWindowSeconds): what is checked is that the client
 * waits out a whole window once, whatever its length, and a 60 s one made the file wait a minute.
 */
const WINDOW_S = 10;
const matrix = new FaultMatrix('Fault matrix: rate limiting (429)');
const ORDER = [
  `sliding ${WINDOW_S} s window, Retry-After in seconds`,
  `sliding ${WINDOW_S} s window, Retry-After as an HTTP date`,
  `sliding ${WINDOW_S} s window, no Retry-After (X-RateLimit-Reset only)`,
  'random 429 storm (25 %), Retry-After in seconds',
  'random 429 storm (25 %), Retry-After as an HTTP date',
  'random 429 storm (25 %), no Retry-After and no reset header',
];

describe('fault matrix: 429 storms end in the ground truth with bounded requests', () => {
  const tmp = tempDir('callsync-rl-');
  /** Requests of a fault-free sync of each dataset (same seed, same settings). */
  const clean = new Map<number, number>();

  beforeAll(async () => {
    for (const calls of [30, 60]) {
      const sim = await startTestSim([{ calls }]);
      try {
        const r = (await syncWith(testSettings(sim, ['app1'], join(tmp.dir, `clean-${calls}.db`)))).results[0]!;
        if (r.status !== 'ok') throw new Error(`clean run of ${calls} calls: ${r.status} ${r.error ?? ''}`);
        clean.set(calls, r.requests);
      } finally {
        await sim.close();
      }
    }
  });
  afterAll(() => {
    console.log(matrix.format(ORDER));
    tmp.cleanup();
  });

  // A window that admits a little more than half the requests a clean run needs: the run must wait
  // out one full window (WINDOW_S) exactly once. A client that ignored Retry-After would spend its
  // attempts within milliseconds and fail those calls.
  const windowRows: [string, FaultProfile['retryAfter']][] = [
    [ORDER[0]!, 'seconds'],
    [ORDER[1]!, 'http-date'],
    [ORDER[2]!, 'none'],
  ];
  for (const [name, retryAfter] of windowRows) {
    it.concurrent(name, { timeout: 150_000 }, async ({ expect }) => {
      const CALLS = 30;
      const base = clean.get(CALLS)!;
      const limit = Math.ceil(base / 2) + 1;
      const sim = await startTestSim([{ calls: CALLS }], { rateLimitPerMinute: limit, rateLimitWindowSeconds: WINDOW_S, retryAfter });
      try {
        const db = join(tmp.dir, `window-${retryAfter}.db`);
        const r = (await syncWith(testSettings(sim, ['app1'], db))).results[0]!;
        const stats = sim.stats('app1');
        // Each request in flight when the window filled gets one 429, then waits; none gets a second.
        const bound = base + 12;
        matrix.add(name, [r], { clean: base, bound, serverRequests: stats.requests, end: 'truth' });
        expect(r.status, r.error).toBe('ok');
        expect(stats.http429).toBeGreaterThan(0);
        expect(r.rateLimited).toBe(stats.http429);
        expect(r.requests).toBeLessThanOrEqual(bound);
        await withStore(db, async (s) => {
          expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]);
          expect(await integrityProblems(s.db)).toEqual([]);
        });
      } finally {
        await sim.close();
      }
    });
  }

  const randomRows: [string, FaultProfile['retryAfter']][] = [
    [ORDER[3]!, 'seconds'],
    [ORDER[4]!, 'http-date'],
    [ORDER[5]!, 'none'],
  ];
  for (const [name, retryAfter] of randomRows) {
    it.concurrent(name, { timeout: 150_000 }, async ({ expect }) => {
      const CALLS = 60;
      const base = clean.get(CALLS)!;
      const p = 0.25;
      const sim = await startTestSim([{ calls: CALLS }], { http429Rate: p, retryAfter, faultSeed: 7 });
      try {
        const db = join(tmp.dir, `random-${retryAfter}.db`);
        // Without any delay from the server, backoff alone (5 ms base in tests) must carry the run.
        const r = (await syncWith(testSettings(sim, ['app1'], db, { maxAttempts: 10 }))).results[0]!;
        const stats = sim.stats('app1');
        const bound = Math.ceil(base * (1 + 3 * p)) + 8;
        matrix.add(name, [r], { clean: base, bound, serverRequests: stats.requests, end: 'truth' });
        expect(r.status, r.error).toBe('ok');
        expect(stats.http429).toBeGreaterThan(0);
        expect(r.rateLimited).toBe(stats.http429);
        expect(r.retries).toBe(r.requests - base);
        expect(r.requests).toBeLessThanOrEqual(bound);
        await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
      } finally {
        await sim.close();
      }
    });
  }
});
