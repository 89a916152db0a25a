import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, TEST_KEY, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { callsVsTruth } from './support/stored-vs-truth.js';
import { relay, startProxy, type Reply } from './support/servers.js';

/**
 * probe72 F1: an error body's code and message were read from the body's text after the key was
 * masked in it, but a key written with JSON escapes (`\u0074\u0065…`) is only the key once parsed:
 * a 200 `{"error":{"code":"ERR_TOO_MANY_REQUESTS","message":"… <escaped key>"}}` put the key, plain,
 * into the retry warning on stderr (the default log level), and a 503 or 403 whose `code` was the
 * escaped key into the retry line and into `callsync check`'s verdict.
 */
const escapeAll = (k: string): string => [...k].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
const tmp = tempDir('callsync-probe72-key-');
afterAll(() => tmp.cleanup());

function config(name: string, proxyUrl: string): string {
  const cfg = join(tmp.dir, `${name}.json`);
  const app = { appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 'unlimited', callsBaseUrl: `${proxyUrl}/app1.call-us/v3`, chatBaseUrl: `${proxyUrl}/app1.api-us/v3` };
  writeFileSync(cfg, JSON.stringify({ database: join(tmp.dir, `${name}.db`), apps: [app], requestTimeoutMs: 2_000, liveMaxDays: 3650 }));
  return cfg;
}

describe('probe72: the key echoed JSON-escaped in an error body\'s code or message', () => {
  const cases: [string, Reply][] = [
    ['a 200 whose body is a rate-limit error, the key in its message', { status: 200, body: `{"error":{"code":"ERR_TOO_MANY_REQUESTS","message":"over the limit for key ${escapeAll(TEST_KEY)}"}}` }],
    ['a 503 whose code is the key', { status: 503, body: `{"error":{"code":"${escapeAll(TEST_KEY)}","message":"unavailable"}}` }],
  ];
  for (const [name, reply] of cases) {
    it(`${name}: the retry warning masks it, the run ends ok and exact`, async () => {
      const service = await FakeCallsService.start({ calls: 20, ongoing: 0, seed: 7201 });
      let n = 0;
      // The first request answers the error, once: the retry it causes is the first (logged) one.
      const proxy = await startProxy(service.url, async (_req, pass) => (++n === 1 ? reply : relay(await pass())));
      try {
        const cfg = config(name.replace(/\W+/g, '-'), proxy.url);
        const r = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
        expect(r.code, r.stderr).toBe(0);
        // The retry was warned (so the line that leaked is there to read), and holds no key.
        expect(r.stderr).toMatch(/waiting for [^\n]*retry 2\/6/);
        expect(r.stderr).toContain('***');
        expect(r.stdout + r.stderr).not.toContain(TEST_KEY);
        expect(await callsVsTruth(service, join(tmp.dir, `${name.replace(/\W+/g, '-')}.db`))).toEqual([]);
      } finally {
        await proxy.close();
        await service.close();
      }
    });
  }

  it('callsync check: a 403 whose code is the key is said without it', async () => {
    const proxy = await startProxy('http://127.0.0.1:9', () => ({ status: 403, body: `{"error":{"code":"${escapeAll(TEST_KEY)}","message":"no"}}` }));
    try {
      const r = await runCli(['check', '--config', config('check', proxy.url)], { [KEY_ENV]: TEST_KEY });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toMatch(/refused \(\*\*\*, HTTP 403\)/);
      expect(r.stdout + r.stderr).not.toContain(TEST_KEY);
    } finally {
      await proxy.close();
    }
  });
});
