import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, tempDir, withStore } from '../helpers/harness.js';
import { startProxy, viaProxy, type TestServer } from '../reliability/support/servers.js';

/**
 * Hostile-fake probe round 8: a service that echoes the key base64-encoded (a `Basic` credential
 * it says it refused, a token) in the error of a Get Call. Masking looked for the key's own text
 * only, and the encoded echo reached calls.detail_error, the log lines and the run's output.
 */
const SECRET = 'csk_BASE64ECHO_7c1e9a04d2b35f86';
/** What the fake echoes: the key after 0, 1 and 2 other bytes, in base64 and in base64url. */
const ECHOES: { before: string; encoding: 'base64' | 'base64url' }[] = [
  { before: '', encoding: 'base64' },
  { before: 'app1:', encoding: 'base64' }, // 5 bytes ahead: the key starts 2 bytes into a group
  { before: 'k=', encoding: 'base64url' }, // 2 bytes ahead
  { before: 'user1:', encoding: 'base64url' }, // 6 bytes ahead: aligned
];
const encode = (e: (typeof ECHOES)[number], key: string): string => Buffer.from(`${e.before}${key}`).toString(e.encoding);
/**
 * The middle of an echo, which only the key's bytes decide (one byte spared at each end): found in
 * anything callsync wrote, the key could be read back from it.
 */
function keyPart(e: (typeof ECHOES)[number]): string {
  const text = encode(e, SECRET);
  const from = Math.ceil((8 * (e.before.length + 1)) / 6);
  const to = Math.floor((8 * (e.before.length + SECRET.length - 1)) / 6);
  return text.slice(from, to);
}

describe('a key echoed base64-encoded by the service', () => {
  let sim: Simulator;
  let echo: TestServer;
  let sync: CliResult;
  const tmp = tempDir('callsync-b64-');
  const db = join(tmp.dir, 'b64.db');

  beforeAll(async () => {
    sim = await startTestSim([{ calls: 40, apiKey: SECRET }]);
    let n = 0;
    echo = await startProxy(sim.url, async (req, pass) => {
      // Every third Get Call: refused, with the key the request carried echoed back encoded.
      if (/\/calls\/[^/?]+/.test(req.url) && ++n % 3 === 0) {
        const said = ECHOES.map((e) => encode(e, req.apikey ?? '')).join(' ');
        return { status: 400, body: `{"error":{"code":"ERR_BAD_REQUEST","message":"credentials refused: ${said}"}}` };
      }
      return pass();
    });
    const cfg = join(tmp.dir, 'config.json');
    writeFileSync(cfg, JSON.stringify({ database: db, detailFetch: 'always', apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...viaProxy(echo.url, 'app1') }] }));
    sync = await runCli(['sync', '--config', cfg, '--json'], { [KEY_ENV]: SECRET, CALLSYNC_LOG_LEVEL: 'trace' });
  }, 120_000);
  afterAll(async () => {
    await echo.close();
    await sim.close();
    tmp.cleanup();
  });

  it('the refusals were stored as the calls\' detail errors, the echoes masked', async () => {
    // Calls Get Call could not supply: kept as listed, the run partial (exit 1), not failed.
    expect(sync.code, sync.stderr.slice(-600)).toBe(1);
    await withStore(db, async (s) => {
      const errors = await s.db.selectFrom('calls').select('detail_error').where('detail_error', 'is not', null).execute();
      expect(errors.length).toBeGreaterThanOrEqual(10);
      for (const r of errors) {
        expect(r.detail_error).toContain('credentials refused');
        for (const e of ECHOES) expect(r.detail_error, `${e.encoding} after ${e.before.length} bytes`).not.toContain(keyPart(e));
      }
    });
  });

  it('no log line, output or database byte holds the key, plain or encoded', () => {
    expect(sync.stderr).toContain('credentials refused');
    const parts = [SECRET, ...ECHOES.map(keyPart)];
    for (const p of parts) {
      expect(sync.stdout).not.toContain(p);
      expect(sync.stderr).not.toContain(p);
      for (const f of readdirSync(tmp.dir)) expect(readFileSync(join(tmp.dir, f)).includes(Buffer.from(p)), `${f}: ${p}`).toBe(false);
    }
  });
});
