import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig } from '../helpers/harness.js';

const WRONG = 'wrong-key-77c1e0';

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe('sync output a person and a script can read', () => {
  let sim: Simulator;
  const tmp = tempDir();
  beforeAll(async () => {
    sim = await startTestSim([{ appId: 'good', calls: 120 }, { appId: 'bad', calls: 20 }]);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  const config = (name: string, apps: Record<string, unknown>[], extra: Record<string, unknown> = {}): string => {
    const cfg = join(tmp.dir, `${name}.json`);
    writeFileSync(cfg, JSON.stringify({ ...testConfig(sim, [], join(tmp.dir, `${name}.db`)), apps, ...extra }));
    return cfg;
  };
  const simApp = (appId: string, apiKeyEnv: string): Record<string, unknown> => ({ appId, region: 'us', apiKeyEnv, requestsPerMinute: 100_000, ...sim.baseUrls(appId) });

  it('reports a failing app once (the summary line), not again as a JSON log line, and names the database', async () => {
    const cfg = config('once', [simApp('good', 'KEY_GOOD'), simApp('bad', 'KEY_BAD')]);
    const res = await runCli(['sync', '--config', cfg], { KEY_GOOD: TEST_KEY, KEY_BAD: WRONG });
    expect(res.code).toBe(1);
    expect(occurrences(res.stdout + res.stderr, 'AUTH_ERR_APIKEY_NOT_FOUND')).toBe(1);
    expect(res.stderr).toMatch(/^bad \(us\): FAILED \[full\]/m);
    expect(res.stdout).toMatch(/^good \(us\): ok \[full\]/m);
    expect(res.stdout).toContain(`database: ${join(tmp.dir, 'once.db')}`);
    expect(res.stdout + res.stderr).not.toContain(WRONG);
  });

  it('sync --json prints one JSON object per app on stdout and nothing else there', async () => {
    const cfg = config('json', [simApp('good', 'KEY_GOOD'), simApp('bad', 'KEY_BAD')]);
    const res = await runCli(['sync', '--json', '--config', cfg], { KEY_GOOD: TEST_KEY, KEY_BAD: WRONG });
    expect(res.code).toBe(1);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const objs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const by = new Map(objs.map((o) => [o.appId, o]));
    const good = by.get('good')!;
    expect(good).toMatchObject({ region: 'us', status: 'ok', mode: 'full', listingComplete: true, error: null, database: join(tmp.dir, 'json.db') });
    expect(good.callsWritten).toBeGreaterThan(0);
    expect(typeof good.listedDistinct).toBe('number');
    const bad = by.get('bad')!;
    expect(bad).toMatchObject({ status: 'failed', mode: 'full' });
    expect(String(bad.error)).toContain('AUTH_ERR_APIKEY_NOT_FOUND');
    // Reported once: in the JSON on stdout, not again on stderr.
    expect(res.stderr).not.toContain('AUTH_ERR_APIKEY_NOT_FOUND');
  });

  it('--log-format pretty writes readable lines, json writes JSON lines, anything else is refused', async () => {
    const cfg = config('fmt', [simApp('good', 'KEY_GOOD')]);
    const pretty = await runCli(['--log-format', 'pretty', 'sync', '--log-level', 'info', '--config', cfg], { KEY_GOOD: TEST_KEY });
    expect(pretty.code).toBe(0);
    expect(pretty.stderr).toMatch(/INFO.*app synced/);
    expect(pretty.stderr).not.toContain('{"level"');
    const json = await runCli(['sync', '--log-format', 'json', '--log-level', 'info', '--config', cfg], { KEY_GOOD: TEST_KEY });
    expect(json.code).toBe(0);
    const line = json.stderr.split('\n').find((l) => l.includes('app synced'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 30, msg: 'app synced', app: 'good' });
    const badFormat = await runCli(['--log-format', 'xml', 'sync', '--config', cfg], { KEY_GOOD: TEST_KEY });
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain('xml');
  });

  describe('final network errors name the host and what to check', () => {
    let silent: Server;
    let trickle: Server;
    let closedPort: number;
    beforeAll(async () => {
      // A server that accepts and never answers.
      silent = createServer(() => {});
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      // One that answers at once and then sends its body a byte every 50 ms; under /cut/, one whose
      // answer begins and whose connection is then closed.
      trickle = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (req.url?.startsWith('/cut/')) {
          res.write('{"data":');
          setTimeout(() => res.socket?.destroy(), 20);
          return;
        }
        const timer = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(timer));
      });
      await new Promise<void>((r) => trickle.listen(0, '127.0.0.1', r));
      const probe = createServer();
      await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
      closedPort = (probe.address() as AddressInfo).port;
      await new Promise<void>((r) => probe.close(() => r()));
    });
    afterAll(async () => {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
      trickle.closeAllConnections();
      await new Promise<void>((r) => trickle.close(() => r()));
    });

    const deadApp = (callsBaseUrl: string): Record<string, unknown> => ({ appId: 'dead', region: 'us', apiKeyEnv: KEY_ENV, callsBaseUrl, chatBaseUrl: callsBaseUrl });

    it.each([
      ['a closed port', () => `http://127.0.0.1:${closedPort}/v3`, () => new RegExp(`127\\.0\\.0\\.1:${closedPort}: connection refused \\(gave up after 2 attempts\\); nothing listens there: check callsBaseUrl`)],
      ['an unknown host', () => 'https://nowhere-1a2b.call-us.invalid/v3', () => /cannot resolve host nowhere-1a2b\.call-us\.invalid \(DNS\) \(gave up after 2 attempts\); check the appId and region, or callsBaseUrl/],
      ['a server that never answers', () => `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v3`, () => /127\.0\.0\.1:\d+: no answer within 300 ms \(requestTimeoutMs\) \(gave up after 2 attempts\)/],
      // It was "no answer" too, sending its owner to check a host that answered.
      // It was "the connection was closed before an answer".
      ['a server that closes the connection mid-answer', () => `http://127.0.0.1:${(trickle.address() as AddressInfo).port}/cut/v3`, () => /127\.0\.0\.1:\d+: HTTP 200 began but the connection closed after \d+ bytes of its body \(gave up after 2 attempts\); the service or a proxy dropped the connection mid-answer/],
      ['a server whose answer trickles in', () => `http://127.0.0.1:${(trickle.address() as AddressInfo).port}/v3`, () => /127\.0\.0\.1:\d+: HTTP 200 began but was not complete within 300 ms \(\d+ bytes of its body in; requestTimeoutMs\) \(gave up after 2 attempts\); the answer comes too slowly/],
    ])('%s', async (name, url, expected) => {
      const cfg = config(`dead-${name.replace(/\W/g, '')}`, [deadApp(url())], { requestTimeoutMs: 300, maxAttempts: 2 });
      const res = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
      expect(res.code).toBe(1);
      const errorLines = res.stderr.split('\n').filter((l) => l.includes('error:'));
      expect(errorLines).toHaveLength(1);
      expect(errorLines[0]).toMatch(expected());
      expect(res.stderr).not.toMatch(/UND_ERR|ENOTFOUND|ECONNREFUSED/);
      // Not on a terminal: the retry was warned in the log.
      expect(res.stderr).toMatch(/"msg":"dead \(us\): waiting for [^"]+: retry 2\/2 in/);
    });
  });
});
