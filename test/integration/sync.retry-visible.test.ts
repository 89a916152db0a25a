import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import type { Simulator } from '../../src/simulator/index.js';
import type { AppRetryEvent } from '../../src/sync/sync-app.js';
import { formatRetryLine } from '../../src/cli/progress.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, TEST_KEY } from '../helpers/harness.js';

/** Answers `failFirst` requests with 503, then passes every request on to the simulator. */
function frontOf(sim: Simulator, appId: string, failFirst: number): Server {
  let seen = 0;
  const target = new URL(sim.baseUrls(appId).callsBaseUrl);
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    if (seen++ < failFirst) {
      res.writeHead(503, { 'content-type': 'text/html' }).end('<h1>503 Service Unavailable</h1>');
      return;
    }
    const path = (req.url ?? '/').replace(/^\/v3/, target.pathname.replace(/\/$/, ''));
    void fetch(`${target.origin}${path}`, { headers: { apikey: String(req.headers.apikey ?? '') } }).then(async (up) => {
      res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await up.arrayBuffer()));
    });
  });
}

async function listen(server: Server, port = 0): Promise<number> {
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

describe('a retried request is told to the progress callback, through the real sync over real HTTP', () => {
  let sim: Simulator;
  const tmp = tempDir();
  const servers: Server[] = [];
  beforeAll(async () => {
    sim = await startTestSim([{ appId: 'app1', calls: 60 }]);
  });
  afterAll(async () => {
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    await sim.close();
    tmp.cleanup();
  });

  const settingsFor = (base: string, db: string) =>
    resolveConfig(
      { database: join(tmp.dir, db), apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, callsBaseUrl: base, chatBaseUrl: sim.baseUrls('app1').chatBaseUrl }], liveMaxDays: 3650, requestTimeoutMs: 2_000 },
      { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '20' },
    );

  it('503 twice, then 200: two retry events naming host, attempt and reason; the sync ends ok', async () => {
    const front = frontOf(sim, 'app1', 2);
    servers.push(front);
    const port = await listen(front);
    const events: AppRetryEvent[] = [];
    const summary = await syncWith(settingsFor(`http://127.0.0.1:${port}/v3`, 'a.db'), { onRetry: (e) => events.push(e) });
    expect(summary.results[0]!.status).toBe('ok');
    expect(events.map((e) => [e.appId, e.region, e.host, e.attempt, e.maxAttempts, e.reason])).toEqual([
      ['app1', 'us', `127.0.0.1:${port}`, 2, 6, 'HTTP 503'],
      ['app1', 'us', `127.0.0.1:${port}`, 3, 6, 'HTTP 503'],
    ]);
    expect(formatRetryLine(events[0]!)).toMatch(new RegExp(`^waiting for 127\\.0\\.0\\.1:${port}: retry 2/6 in \\d+ ms \\(HTTP 503\\)$`));
  });

  it('connection refused until the server comes up: the retry says so, then the sync ends ok', async () => {
    const probe = createServer();
    const port = await listen(probe);
    await new Promise<void>((r) => probe.close(() => r()));
    const late = frontOf(sim, 'app1', 0);
    servers.push(late);
    const events: AppRetryEvent[] = [];
    const summary = await syncWith(settingsFor(`http://127.0.0.1:${port}/v3`, 'b.db'), {
      onRetry: (e) => {
        events.push(e);
        if (events.length === 1) void listen(late, port);
      },
    });
    expect(summary.results[0]!.status).toBe('ok');
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events[0]!.reason).toBe('connection refused');
    expect(formatRetryLine(events[0]!)).toMatch(new RegExp(`^waiting for 127\\.0\\.0\\.1:${port}: retry 2/6 in \\d+ ms \\(connection refused\\)$`));
  });

  it('the scheduled tick (schedule --run-now, no terminal) logs the retry as it waits, not only the outcome', async () => {
    const front = frontOf(sim, 'app1', 1);
    servers.push(front);
    const port = await listen(front);
    const cfg = join(tmp.dir, 'schedule.json');
    writeFileSync(cfg, JSON.stringify({
      database: join(tmp.dir, 'c.db'),
      apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, callsBaseUrl: `http://127.0.0.1:${port}/v3`, chatBaseUrl: sim.baseUrls('app1').chatBaseUrl }],
      liveMaxDays: 3650,
      schedule: { exportDayOfMonth: 0 },
    }));
    const res = await runCli(['schedule', '--run-now', '--config', cfg, '--log-format', 'json'], { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '20' });
    expect(res.code).toBe(0);
    const warned = res.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; reason?: string; attempt?: number });
    expect(warned.filter((l) => l.reason === 'HTTP 503').map((l) => [l.attempt, l.msg?.includes(`waiting for 127.0.0.1:${port}: retry 2/6`)])).toEqual([[2, true]]);
  }, 60_000);
});
