import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/config/secret.js';
import { ApiError } from '../../src/source/errors.js';
import { AppHttpClient } from '../../src/source/http-client.js';
import type { RequestsPerMinute } from '../../src/config/schema.js';
import { PACING_HEADROOM, RequestPacer } from '../../src/source/request-pacer.js';
import { TestClock } from '../helpers/test-clock.js';

/** What the test's own server answers to its next requests; an empty script answers 200. */
type Reply = { status: number; headers?: Record<string, string> } | 'hang';

// Pacing, retry waits and the per-attempt deadline over real HTTP to a server of the test's own,
// with time on a test clock: each request goes out when the clock says, never before, and no test waits.
describe('the HTTP client keeps its timing on the injected clock', () => {
  let server: Server;
  let base: string;
  const hits: number[] = [];
  let script: Reply[] = [];
  let clock: TestClock;
  const hung: ServerResponse[] = [];
  const dispatcher = new Agent({ keepAliveTimeout: 1_000 });

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      hits.push(clock.now());
      const reply = script.shift() ?? { status: 200 };
      if (reply === 'hang') {
        hung.push(res);
        return;
      }
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.status === 200 ? JSON.stringify({ data: [] }) : JSON.stringify({ error: { code: 'ERR_TEST', message: 'scripted' } }));
      req.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    for (const res of hung.splice(0)) res.destroy();
    hits.length = 0;
    script = [];
  });
  afterAll(async () => {
    await dispatcher.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function client(opts: { requestsPerMinute?: RequestsPerMinute; maxAttempts?: number; timeoutMs?: number } = {}): AppHttpClient {
    return new AppHttpClient({
      appId: 'app1', region: 'us', apiKey: new Secret('test-key-0123456789abcdef'), dispatcher,
      pacer: new RequestPacer(opts.requestsPerMinute ?? 6_000, clock), clock,
      // Long real-world timeouts: undici's own header/body timers must not fire while the test clock stands.
      timeoutMs: opts.timeoutMs ?? 600_000, maxAttempts: opts.maxAttempts ?? 3, retryBaseMs: 1_000,
    });
  }

  it('spaces requests by the pacing interval: the next goes out when the clock reaches its slot', async () => {
    clock = new TestClock(Date.UTC(2026, 0, 1));
    const start = clock.now();
    const interval = 60_000 / (60 * PACING_HEADROOM);
    const c = client({ requestsPerMinute: 60 });
    const done = [1, 2, 3].map((i) => c.getJson(base, `/calls?page=${i}`, 'list', `page ${i}`));
    await vi.waitFor(() => expect(hits).toHaveLength(1));
    await done[0];
    // The other two sleep on the test clock until their slots.
    expect(clock.nextDueIn).toBeCloseTo(interval, 2);
    await clock.advance(Math.floor(interval));
    expect(hits).toHaveLength(1);
    await clock.advance(1);
    await vi.waitFor(() => expect(hits).toHaveLength(2));
    await clock.advance(Math.ceil(interval));
    await Promise.all(done);
    // Each went out at its slot (the clock reads the slot, or the end of the step that reached it).
    expect(hits).toHaveLength(3);
    hits.forEach((at, i) => {
      expect(at - start).toBeGreaterThanOrEqual(Math.floor(i * interval));
      expect(at - start).toBeLessThanOrEqual(Math.ceil(i * interval) + 1);
    });
  });

  it('with requestsPerMinute "unlimited" sends every request with the clock standing, and still holds them after a 429', async () => {
    clock = new TestClock(Date.UTC(2026, 0, 1));
    const start = clock.now();
    const c = client({ requestsPerMinute: 'unlimited' });
    await Promise.all([1, 2, 3, 4, 5].map((i) => c.getJson(base, `/calls?page=${i}`, 'list', `page ${i}`)));
    expect(hits).toEqual([start, start, start, start, start]);
    expect(clock.pending).toBe(0);
    // A proxy's 429 pauses the app as it would a paced one: the retry and a new request wait for Retry-After.
    script = [{ status: 429, headers: { 'retry-after': '5' } }];
    const first = c.getJson(base, '/calls?page=6', 'list', 'page 6');
    await vi.waitFor(() => expect(clock.nextDueIn).toBe(5_000));
    const second = c.getJson(base, '/calls?page=7', 'list', 'page 7');
    await clock.advance(4_999);
    expect(hits).toHaveLength(6);
    await clock.advance(1);
    await Promise.all([first, second]);
    expect(hits.slice(6)).toEqual([start + 5_000, start + 5_000]);
  });

  it('waits the jittered backoff after a 503, and a 429 Retry-After, on the clock before asking again', async () => {
    clock = new TestClock(Date.UTC(2026, 0, 1));
    const start = clock.now();
    // Backoff of the first retry: retryBaseMs, jittered into [1/2, 1] of it; random() = 0.5 gives 3/4.
    script = [{ status: 503 }, { status: 429, headers: { 'retry-after': '5' } }];
    const c = client();
    const done = c.getJson(base, '/calls', 'list', 'List Calls page 1');
    await vi.waitFor(() => expect(clock.nextDueIn).toBe(750));
    expect(hits).toEqual([start]);
    await clock.advance(749);
    expect(hits).toHaveLength(1);
    await clock.advance(1);
    // Second failure is a 429 asking for 5 s, longer than the 2nd backoff (at most 2 s): 5 s it is.
    await vi.waitFor(() => expect(clock.nextDueIn).toBe(5_000));
    expect(hits).toEqual([start, start + 750]);
    await clock.advance(4_999);
    expect(hits).toHaveLength(2);
    await clock.advance(1);
    await expect(done).resolves.toEqual({ data: [] });
    expect(hits).toEqual([start, start + 750, start + 5_750]);
    expect(c.counters.retries).toBe(2);
  });

  it('gives up on a request with no answer when the clock passes timeoutMs, not before', async () => {
    clock = new TestClock(Date.UTC(2026, 0, 1));
    script = ['hang'];
    const c = client({ maxAttempts: 1, timeoutMs: 30_000 });
    let settled: unknown;
    const done = c.getJson(base, '/calls', 'list', 'List Calls page 1').then(
      () => (settled = 'answered'),
      (err: unknown) => (settled = err),
    );
    await vi.waitFor(() => expect(hits).toHaveLength(1));
    await clock.advance(29_999);
    expect(settled).toBeUndefined();
    await clock.advance(1);
    await vi.waitFor(() => expect(settled).toBeInstanceOf(ApiError), { timeout: 5_000 });
    await done;
    expect((settled as ApiError).kind).toBe('transient');
    expect((settled as ApiError).message).toMatch(/30 s|timed out|no answer/i);
  });
});
