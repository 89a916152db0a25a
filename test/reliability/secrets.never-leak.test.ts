import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';
import { settingsAt } from './support/matrix.js';
import { relay, startProxy, startServer, viaProxy, type TestServer } from './support/servers.js';

/**
 * The API key never leaves the process except in the `apikey` header to the configured host: not in
 * a log line (at trace level), stdout, stderr, an error, a database byte (file, -wal, -shm), an
 * export or a report; not even when the service echoes it back; and never to a host a redirect
 * names. Two recognisable keys: the right one, and a wrong one that produces errors.
 */
const SECRET = 'csk_RECOGNISABLE_9f3c2e71a6b84d05';
const WRONG = 'csk_WRONGKEY_6d1e0b9a72c4f358';
const KEYS = [SECRET, WRONG];

/** The keys as bytes, raw and in the forms a careless encoder would produce. */
const FORMS = KEYS.flatMap((k) => [Buffer.from(k), Buffer.from(encodeURIComponent(k)), Buffer.from(Buffer.from(k).toString('base64')), Buffer.from(k, 'utf16le')]);

function leaks(data: string | Buffer): string[] {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  return FORMS.filter((f) => buf.includes(f)).map((f) => f.toString('latin1'));
}

function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? allFiles(p) : [p];
  });
}

describe('the API key never leaks', () => {
  let sim: Simulator;
  let echo: TestServer;
  const tmp = tempDir('callsync-secrets-');
  const db = join(tmp.dir, 'secrets.db');
  const cfg = join(tmp.dir, 'config.json');
  const outputs: { command: string; res: CliResult }[] = [];
  const env = (key: string): Record<string, string> => ({ [KEY_ENV]: key, CALLSYNC_LOG_LEVEL: 'trace' });

  beforeAll(async () => {
    sim = await startTestSim([{ appId: 'app1', calls: 300, apiKey: SECRET }, { appId: 'app2', calls: 200, apiKey: SECRET }], { notFoundCalls: 2, malformedCalls: 2 });
    // app2 is reached through a server that echoes the key it receives, as api-seed.md §5 allows
    // ("the API key property, where returned, is named apiKey"): into every record, and into the
    // message of an error now and then.
    let n = 0;
    echo = await startProxy(sim.url, async (req, pass) => {
      const key = req.apikey ?? '';
      if (++n % 9 === 0) return { status: 503, body: JSON.stringify({ code: 'ERR_UNAVAILABLE', message: `busy; your key ${key} is fine` }) };
      const up = await pass();
      const text = up.body.toString('utf8');
      return relay(up, text.replace(/"sessionId":/g, `"apiKey":${JSON.stringify(key)},"note":"key=${key}","sessionId":`));
    });
    const today = new Date().getUTCDate();
    writeFileSync(
      cfg,
      JSON.stringify({
        database: db,
        apps: [
          { appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...sim.baseUrls('app1') },
          { appId: 'app2', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...viaProxy(echo.url, 'app2') },
        ],
        requestTimeoutMs: 2_000,
        // The scheduled tick writes its billing export today, so the export is checked too.
        schedule: { exportDayOfMonth: today <= 28 ? today : 0, exportDir: join(tmp.dir, 'exports') },
      }),
    );
    const run = async (command: string, args: string[], key = SECRET): Promise<void> => {
      outputs.push({ command, res: await runCli(args, env(key)) });
    };
    await run('config check', ['config', 'check', '--config', cfg]);
    await run('migrate', ['migrate', '--config', cfg]);
    await run('sync', ['sync', '--config', cfg]);
    await run('sync --full', ['sync', '--full', '--config', cfg]);
    await run('schedule --run-now', ['schedule', '--run-now', '--config', cfg]);
    // The commands that only read the database run side by side.
    await Promise.all([
      run('reconcile', ['reconcile', '--config', cfg, '--format', 'json']),
      run('export billing --with-usage (json, --out)', ['export', 'billing', '--month', '2025-11', '--with-usage', '--format', 'json', '--config', cfg, '--out', join(tmp.dir, 'billing.json')]),
      run('export billing --with-usage (csv, stdout)', ['export', 'billing', '--month', '2025-11', '--with-usage', '--config', cfg]),
    ]);
    await Promise.all([
      run('export billing --detail', ['export', 'billing', '--month', '2025-11', '--detail', '--config', cfg, '--out', join(tmp.dir, 'detail.csv')]),
      run('query calls', ['query', '--config', cfg, '--format', 'json', 'select * from calls order by session_id limit 200']),
      run('query runs and rejects', ['query', '--config', cfg, '--format', 'csv', 'select r.*, x.* from sync_runs r left join rejected_records x on x.run_id = r.run_id']),
    ]);
    await Promise.all([
      run('report', ['report', '--month', '2025-11', '--config', cfg, '--out', join(tmp.dir, 'report.html')]),
      run('runs', ['runs', '--config', cfg, '--format', 'json']),
      run('status', ['status', '--config', cfg, '--format', 'json']),
    ]);
    await run('sync, wrong key', ['sync', '--config', cfg], WRONG);
    await Promise.all([
      run('export --with-usage, wrong key', ['export', 'billing', '--month', '2025-11', '--with-usage', '--config', cfg], WRONG),
      run('config check, wrong key', ['config', 'check', '--config', cfg], WRONG),
    ]);
  }, 120_000);
  afterAll(async () => {
    await echo.close();
    await sim.close();
    tmp.cleanup();
  });

  it('every command ran, and did its job', async () => {
    const byName = new Map(outputs.map((o) => [o.command, o.res]));
    // The syncs end partial (exit 1) for the 2 calls of each app the simulator serves unreadably, and say so.
    for (const name of ['sync', 'sync --full', 'schedule --run-now']) {
      const res = byName.get(name)!;
      expect(res.code, `${name}: ${res.stderr.slice(-600)}`).toBe(1);
      expect(res.stdout + res.stderr, name).toMatch(/2 listed call\(s\) could be read neither from List Calls nor from Get Call/);
    }
    for (const name of ['config check', 'migrate', 'reconcile', 'export billing --with-usage (json, --out)', 'export billing --with-usage (csv, stdout)', 'export billing --detail', 'query calls', 'query runs and rejects', 'report', 'runs']) {
      expect(byName.get(name)!.code, `${name}: ${byName.get(name)!.stderr.slice(-600)}`).toBe(0);
    }
    expect(byName.get('sync, wrong key')!.code).toBe(1);
    expect(byName.get('sync, wrong key')!.stderr).toContain('AUTH_ERR_APIKEY_NOT_FOUND');
    // The log level really was lowered (info lines are below the default warn): the logs are there to
    // be searched. The syncs are partial (no "app synced" line); the scheduled run logs its tick at info.
    expect(byName.get('schedule --run-now')!.stderr).toMatch(/"level":30,/);
    await withStore(db, async (s) => {
      expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]);
      expect(await diffAgainstTruth(s.db, sim.truth('app2'))).toEqual([]);
    });
  });

  it('no stdout, stderr, log line or error of any command holds a key', () => {
    for (const { command, res } of outputs) {
      expect(leaks(res.stdout), `${command} stdout`).toEqual([]);
      expect(leaks(res.stderr), `${command} stderr`).toEqual([]);
    }
  });

  it('no byte of the database (file, -wal, -shm), the exports or the report holds a key', () => {
    const files = allFiles(tmp.dir);
    expect(files.some((f) => f.endsWith('secrets.db'))).toBe(true);
    expect(files.some((f) => f.endsWith('report.html'))).toBe(true);
    expect(files.some((f) => f.endsWith('billing.json'))).toBe(true);
    for (const f of files) expect(leaks(readFileSync(f)), f).toEqual([]);
  });

  it('the key echoed by the service is masked, not stored', async () => {
    await withStore(db, async (s) => {
      const row = await s.db.selectFrom('call_payloads').select('raw_json').where('app_id', '=', 'app2').executeTakeFirstOrThrow();
      expect(JSON.parse(row.raw_json)).toMatchObject({ apiKey: '***', note: 'key=***' });
    });
  });
});

describe('a redirect to another host', () => {
  it('is never followed, so the key never reaches that host; the run fails with a clear message', async () => {
    const tmp = tempDir('callsync-redirect-');
    const elsewhere = await startServer(() => ({ status: 200, body: '{"data":[]}' }));
    const statuses = [302, 301, 307, 308];
    let n = 0;
    const redirecting = await startServer((req) => ({ status: statuses[n++ % statuses.length]!, headers: { location: `${elsewhere.url}${req.url}` }, body: '' }));
    try {
      const urls = viaProxy(redirecting.url, 'app1');
      for (let i = 0; i < statuses.length; i++) {
        const r = (await syncWith(settingsAt(urls, join(tmp.dir, `r${i}.db`), {}, {}, { [KEY_ENV]: SECRET }))).results[0]!;
        expect(r.status).toBe('failed');
        expect(r.error).toMatch(/^app app1 \(us\): List Calls (page 1|\(first page, asked as page=0\)) failed: HTTP 30[1278] redirect not followed \(the API key is only sent to the configured host\); check callsBaseUrl\/chatBaseUrl/);
        expect(r.requests).toBe(1);
      }
      writeFileSync(join(tmp.dir, 'c.json'), JSON.stringify({ database: join(tmp.dir, 'cli.db'), apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, ...urls }] }));
      const cli = await runCli(['sync', '--config', join(tmp.dir, 'c.json')], { [KEY_ENV]: SECRET });
      expect(cli.code).toBe(1);
      expect(cli.stderr).toContain('redirect not followed');
      const usage = await runCli(['export', 'billing', '--month', '2025-11', '--with-usage', '--database', join(tmp.dir, 'cli.db'), '--config', join(tmp.dir, 'c.json')], { [KEY_ENV]: SECRET });
      expect(usage.stderr).toContain('redirect not followed');
      expect(leaks(cli.stdout + cli.stderr + usage.stdout + usage.stderr)).toEqual([]);
      expect(redirecting.requests.length).toBeGreaterThan(0);
      expect(redirecting.requests.every((q) => q.apikey === SECRET)).toBe(true);
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await redirecting.close();
      await elsewhere.close();
      tmp.cleanup();
    }
  });
});
