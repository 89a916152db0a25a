import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestSim, tempDir } from '../helpers/harness.js';

const KEY = 'sk-check-RECOGNISABLE-7c1e9a2b';

/**
 * A service of the test's own: the first path segment says how it answers, on both APIs or only
 * on the Chat API (`plan`: Calls answers, Usage Metrics is not in the plan). Error bodies echo the
 * key, as a careless service might: it must still not reach the output.
 */
function fakeService(): Promise<Server> {
  const server = createServer((req, res) => {
    const [, mode, , api] = (req.url ?? '').split('/');
    const key = String(req.headers.apikey ?? '');
    const fail = (status: number, code: string): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code, message: `refused for key ${key}` } }));
    };
    if (mode === 'wrongkey') return fail(401, 'AUTH_ERR_APIKEY_NOT_FOUND');
    if (mode === 'noaccess') return fail(403, 'AUTH_ERR_NO_ACCESS');
    if (mode === 'plan' && api?.startsWith('stats')) return fail(403, 'ERR_PLAN_RESTRICTION');
    if (mode === 'expired') return fail(403, 'ERR_SUBSCRIPTION_EXPIRED');
    // An answer that begins and then trickles, or is cut off.
    if (mode === 'trickle' || mode === 'cutoff') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
      if (mode === 'cutoff') return void setTimeout(() => res.socket?.destroy(), 20);
      const timer = setInterval(() => res.write(' '), 50);
      return void res.on('close', () => clearInterval(timer));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [], meta: { pagination: { total: 0, count: 0, per_page: 1, current_page: 1, total_pages: 0 } } }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('callsync check tries each key with one cheap request per API', () => {
  let sim: Simulator;
  let fake: Server;
  const tmp = tempDir('callsync-check-');
  let cfg: string;
  beforeAll(async () => {
    sim = await startTestSim([{ appId: 'good', calls: 40, apiKey: KEY }]);
    fake = await fakeService();
    const f = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const dead = `http://127.0.0.1:${await closedPort()}/v3`;
    const app = (appId: string, base: { callsBaseUrl: string; chatBaseUrl: string }, apiKeyEnv = 'CHECK_KEY') => ({ appId, region: 'us', apiKeyEnv, ...base });
    const fakeAt = (mode: string) => ({ callsBaseUrl: `${f}/${mode}/v3`, chatBaseUrl: `${f}/${mode}/v3` });
    cfg = join(tmp.dir, 'check.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        database: 'never-created.db',
        requestTimeoutMs: 3_000,
        apps: [
          app('good', sim.baseUrls('good')),
          app('wrongkey', fakeAt('wrongkey')),
          app('noaccess', fakeAt('noaccess')),
          app('plan', fakeAt('plan')),
          app('expired', fakeAt('expired')),
          app('closed', { callsBaseUrl: dead, chatBaseUrl: dead }),
          app('dns', { callsBaseUrl: 'https://callsync-check.invalid/v3', chatBaseUrl: 'https://callsync-check.invalid/v3' }),
          app('nokey', fakeAt('ok'), 'CHECK_KEY_UNSET'),
        ],
      }),
    );
  });
  afterAll(async () => {
    await sim.close();
    await new Promise((r) => fake.close(r));
    tmp.cleanup();
  });

  it('says per app and API: ok, wrong key, no access, plan restriction, unreachable host (how), missing variable; exit 1', async () => {
    const before = sim.stats('good');
    const [list0, stats0] = [before.list, before.stats];
    const res = await runCli(['check', '--config', cfg], { CHECK_KEY: KEY });
    expect(res.code, res.stderr).toBe(1);
    const line = (app: string, api: string): string => res.stdout.split('\n').find((l) => l.startsWith(app) && l.includes(`${api}:`)) ?? `(no line for ${app} ${api})`;
    expect(line('good', 'Calls API')).toMatch(/^good \(us\)\s+Calls API: ok$/);
    expect(line('good', 'Chat API')).toMatch(/^good \(us\)\s+Chat API: ok$/);
    // One request per API, no more.
    expect([sim.stats('good').list - list0, sim.stats('good').stats - stats0]).toEqual([1, 1]);
    for (const api of ['Calls API', 'Chat API']) {
      expect(line('wrongkey', api)).toContain(`${api}: wrong key (AUTH_ERR_APIKEY_NOT_FOUND, HTTP 401): the service does not accept the key in CHECK_KEY`);
      expect(line('noaccess', api)).toContain(`${api}: no access (AUTH_ERR_NO_ACCESS, HTTP 403): the key in CHECK_KEY lacks the fullAccess scope`);
      expect(line('expired', api)).toContain(`${api}: subscription expired (ERR_SUBSCRIPTION_EXPIRED, HTTP 403)`);
      expect(line('closed', api)).toMatch(/unreachable host 127\.0\.0\.1:\d+: connection refused; check appId and region and (calls|chat)BaseUrl/);
      expect(line('dns', api)).toMatch(/unreachable host callsync-check\.invalid: DNS (name not found|lookup failed)/);
      expect(line('nokey', api)).toContain(`${api}: environment variable CHECK_KEY_UNSET is not set`);
    }
    expect(line('plan', 'Calls API')).toMatch(/Calls API: ok$/);
    expect(line('plan', 'Chat API')).toContain('Chat API: plan restriction (ERR_PLAN_RESTRICTION, HTTP 403)');
    expect(res.stderr.trim()).toBe('callsync: 13 of 16 checks failed');
    expect(res.stdout + res.stderr).not.toContain(KEY);
  }, 120_000);

  it('--app narrows the check (exit 0 when those pass) and refuses an unknown app', async () => {
    const ok = await runCli(['check', '--config', cfg, '--app', 'good', 'plan'], { CHECK_KEY: KEY });
    expect(ok.stdout.trim().split('\n')).toHaveLength(4);
    expect(ok.code).toBe(1);
    const good = await runCli(['check', '--config', cfg, '--app', 'good'], { CHECK_KEY: KEY });
    expect([good.code, good.stdout.trim().split('\n').length]).toEqual([0, 2]);
    const bad = await runCli(['check', '--config', cfg, '--app', 'godo'], { CHECK_KEY: KEY });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--app godo: not in .*check\.json; configured apps: good, wrongkey/);
  }, 120_000);

  it('a host that answered, but not whole (cut off, or trickling past requestTimeoutMs), is not called unreachable', async () => {
    // Both were "unreachable host …: port … accepts connections but no HTTP answer came" (probe round 21).
    const f = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const partial = join(tmp.dir, 'partial.json');
    writeFileSync(partial, JSON.stringify({ database: 'never-created.db', requestTimeoutMs: 500, apps: ['trickle', 'cutoff'].map((mode) => ({ appId: mode, region: 'us', apiKeyEnv: 'CHECK_KEY', callsBaseUrl: `${f}/${mode}/v3`, chatBaseUrl: `${f}/${mode}/v3` })) }));
    const res = await runCli(['check', '--config', partial], { CHECK_KEY: KEY });
    expect(res.code).toBe(1);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    for (const l of lines) {
      expect(l).toMatch(/API: incomplete answer \(HTTP 200\): /);
      expect(l).not.toContain('unreachable');
    }
    expect(lines.filter((l) => l.startsWith('trickle')).every((l) => /HTTP 200 began but was not complete within 500 ms/.test(l))).toBe(true);
    expect(lines.filter((l) => l.startsWith('cutoff')).every((l) => /HTTP 200 began but the connection closed after \d+ bytes of its body/.test(l))).toBe(true);
    expect(res.stdout + res.stderr).not.toContain(KEY);
  }, 120_000);
});
