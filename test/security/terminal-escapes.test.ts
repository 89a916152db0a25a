import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.js';
import { KEY_ENV, tempDir, TEST_KEY } from '../helpers/harness.js';
import { startServer, type Reply, type TestServer } from '../reliability/support/servers.js';

/**
 * Text the service controls reaches the terminal without its control characters: an error message
 * and call fields (type, status, receiver) carrying ESC [ … (clear screen, cursor home, colours),
 * OSC (window title), BEL, a bare CR and the 8-bit CSI are printed by sync, runs, status and
 * reconcile, in every format, with none of those bytes. Before the fix the error rewrote the screen
 * into a fake "All apps synced OK".
 */

const CLEAR = '\u001b[2J\u001b[H';
const FAKE_OK = `${CLEAR}bad request\nAll apps synced OK\r\n\u001b]0;pwned\u0007\u009b31m\u001b[32mok\u001b[0m\rok`;

/** Control bytes a terminal acts on: C0 but tab and LF, a CR not before LF, DEL, C1. */
function controlBytes(text: string): string[] {
  // eslint-disable-next-line no-control-regex
  return [...text.matchAll(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/g)].map((m) => JSON.stringify(m[0]));
}

function call(id: string, at: number): Record<string, unknown> {
  const participant = (uid: string): Record<string, unknown> => ({
    uid, deviceId: `dev-${uid}`, isJoined: true, joinedAt: at + 3, leftAt: at + 63, state: 'ended', totalAudioMinutes: 1, totalVideoMinutes: 0, totalDuration: 1,
  });
  return {
    sessionId: id, type: `audio${CLEAR}`, mode: 'call', receiverType: 'user', receiver: `user-2\u001b[31m\u009b2J`, initiator: 'user-1',
    status: `ended\r\u001b]0;pwned\u0007`, hasRecording: false, initiatedAt: at, startedAt: at + 3, endedAt: at + 63,
    participants: [participant('user-1'), participant('user-2')],
    // Call totals that disagree with the participants: the call is a reconcile mismatch, listed with its fields.
    totalAudioMinutes: 9, totalVideoMinutes: 0, totalDurationInMinutes: 9, totalDuration: '00:01:00', totalParticipants: 2,
  };
}

describe('service text is printed without terminal control sequences', () => {
  let server: TestServer;
  const tmp = tempDir('callsync-terminal-');
  const db = join(tmp.dir, 'calls.db');
  const cfg = join(tmp.dir, 'config.json');
  const results: { command: string; res: CliResult }[] = [];
  const at = Math.floor(Date.now() / 1000) - 7200;
  const calls = [call('v1.us.term.000001', at), call('v1.us.term.000002', at + 60), call('v1.us.term.000003', at + 120)];

  beforeAll(async () => {
    server = await startServer((req): Reply => {
      const path = req.url.split('?')[0]!;
      const json = (status: number, body: unknown): Reply => ({ status, body: JSON.stringify(body) });
      if (path.startsWith('/broken/')) return json(400, { error: { code: 'ERR_BAD_REQUEST', message: FAKE_OK } });
      if (path === '/good/v3/calls') {
        const page = Number(new URLSearchParams(req.url.split('?')[1] ?? '').get('page') ?? 1);
        const data = page <= 1 ? calls : [];
        return json(200, { data, meta: { pagination: { total: calls.length, count: data.length, per_page: 100, current_page: Math.max(page, 1), total_pages: 1 } } });
      }
      const one = calls.find((c) => path === `/good/v3/calls/${String(c.sessionId)}`);
      if (one) return json(200, { data: one });
      return json(404, { error: { code: 'ERR_NOT_FOUND', message: `nothing at ${path}` } });
    });
    writeFileSync(
      cfg,
      JSON.stringify({
        database: db,
        apps: [
          { appId: 'good', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, callsBaseUrl: `${server.url}/good/v3`, chatBaseUrl: `${server.url}/good-chat/v3` },
          { appId: 'broken', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, callsBaseUrl: `${server.url}/broken/v3`, chatBaseUrl: `${server.url}/broken-chat/v3` },
        ],
        maxAttempts: 1,
        requestTimeoutMs: 5_000,
      }),
    );
    const env = { [KEY_ENV]: TEST_KEY };
    const run = async (command: string, args: string[]): Promise<void> => {
      results.push({ command, res: await runCli(args, env) });
    };
    await run('sync', ['sync', '--config', cfg]);
    await run('schedule --run-now', ['schedule', '--run-now', '--config', cfg]);
    for (const format of ['table', 'json']) {
      await run(`runs --format ${format}`, ['runs', '--config', cfg, '--format', format]);
      await run(`status --format ${format}`, ['status', '--config', cfg, '--format', format]);
    }
    for (const format of ['table', 'csv', 'json']) await run(`reconcile --format ${format}`, ['reconcile', '--config', cfg, '--format', format]);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    tmp.cleanup();
  });

  it('no command prints an escape sequence, BEL, bare CR or C1 byte on stdout or stderr', () => {
    // The hostile text did reach the commands: the app failed with the message, the calls were stored.
    const sync = results.find((r) => r.command === 'sync')!.res;
    expect(sync.code).toBe(1);
    expect(sync.stderr).toContain('All apps synced OK'); // the words, harmless once their escapes are gone
    const reconcile = results.find((r) => r.command === 'reconcile --format json')!.res;
    expect(reconcile.stdout).toContain('v1.us.term.000001');
    expect(results.find((r) => r.command === 'runs --format table')!.res.stdout).toContain('ERR_BAD_REQUEST');
    const found = results.flatMap(({ command, res }) => [
      ...controlBytes(res.stdout).map((b) => `${command} stdout ${b}`),
      ...controlBytes(res.stderr).map((b) => `${command} stderr ${b}`),
    ]);
    expect([...new Set(found)]).toEqual([]);
  });

  it('a failed app is still one summary line plus one error line: a line break in the message forges no line', () => {
    const sync = results.find((r) => r.command === 'sync')!.res;
    const lines = sync.stderr.split('\n').filter((l) => l.startsWith('broken') || l.startsWith('  error:'));
    expect(lines).toHaveLength(2);
    expect(sync.stderr.split('\n').some((l) => l.startsWith('All apps synced OK'))).toBe(false);
  });
});
