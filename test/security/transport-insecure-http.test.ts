import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, TEST_KEY, tempDir } from '../helpers/harness.js';

/**
 * Issue 13, point 12: plain http:// to a host that is not loopback would send the `apikey` header in
 * clear. It is refused when the config is resolved, in one line naming the app and the field, unless
 * the app sets allowInsecureHttp; loopback (the simulator, the tests) stays allowed.
 */
describe('a base URL with plain http://', () => {
  const tmp = tempDir('callsync-http-');
  afterAll(() => tmp.cleanup());
  let n = 0;
  const check = (command: string, app: Record<string, unknown>) => {
    const cfg = join(tmp.dir, `config-${++n}.json`);
    writeFileSync(cfg, JSON.stringify({ database: join(tmp.dir, `db-${n}.db`), apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, ...app }] }));
    return runCli(command === 'sync' ? ['sync', '--config', cfg] : ['config', 'check', '--config', cfg], { [KEY_ENV]: TEST_KEY });
  };

  it('to a remote host is refused by config check and sync: exit 2, one line naming the app and the field', async () => {
    for (const [command, field, app] of [
      ['config check', 'callsBaseUrl', { callsBaseUrl: 'http://calls.example.com/v3' }],
      ['sync', 'chatBaseUrl', { chatBaseUrl: 'http://10.1.2.3:8080/v3' }],
    ] as const) {
      const res = await check(command, app);
      expect(res.code, `${command}: ${res.stderr}`).toBe(2);
      const lines = res.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`apps[0].${field}`);
      expect(lines[0]).toContain('app1');
      expect(lines[0]).toMatch(/https:\/\/.*allowInsecureHttp/);
    }
  }, 60_000);

  it('to a remote host is accepted when the app sets allowInsecureHttp', async () => {
    const res = await check('config check', { callsBaseUrl: 'http://calls.example.com/v3', allowInsecureHttp: true });
    expect(res.code, res.stderr).toBe(0);
  }, 60_000);

  it('to loopback (127.0.0.0/8, ::1, localhost) and https anywhere are accepted', async () => {
    const urls = ['http://127.0.0.1:9/v3', 'http://127.8.9.10/v3', 'http://[::1]:9/v3', 'http://localhost:9/v3', 'https://calls.example.com/v3'];
    const results = await Promise.all(urls.map((url) => check('config check', { callsBaseUrl: url, chatBaseUrl: url })));
    results.forEach((res, i) => expect(res.code, `${urls[i]}: ${res.stderr}`).toBe(0));
  }, 60_000);
});
