import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, tempDir, TEST_KEY } from '../helpers/harness.js';
import { startServer, type Reply, type TestServer } from '../reliability/support/servers.js';

/**
 * An endless listing no longer fills the disk or the memory: List Calls pages are capped per app
 * and run (maxPagesPerRun), members per group (maxMembersPerGroup), and hitting a cap fails the app
 * with one line naming the cap and how to raise it. The fake servers below are endless in the way
 * that defeats every other check: each page brings new ids and no figure says where the end is.
 * They give up after a few hundred pages, so that without the caps the run ends (and the test
 * fails on what it asserts) instead of running forever.
 */

/** Pages (or member pages) after which the fake finally ends: far beyond the caps the tests set. */
const GIVE_UP_AFTER = 300;

function call(id: string, at: number, receiver: { type: 'user' | 'group'; id: string }): Record<string, unknown> {
  const participant = (uid: string): Record<string, unknown> => ({
    uid, deviceId: `dev-${uid}`, isJoined: true, joinedAt: at + 3, leftAt: at + 63, state: 'ended', totalAudioMinutes: 1, totalVideoMinutes: 0, totalDuration: 1,
  });
  return {
    sessionId: id, type: 'audio', mode: receiver.type === 'group' ? 'meet' : 'call', receiverType: receiver.type, receiver: receiver.id, initiator: 'user-1',
    status: 'ended', hasRecording: false, initiatedAt: at, startedAt: at + 3, endedAt: at + 63,
    participants: [participant('user-1'), participant('user-2')],
    totalAudioMinutes: 2, totalVideoMinutes: 0, totalDurationInMinutes: 2, totalDuration: '00:01:00', totalParticipants: 2,
  };
}

const json = (status: number, body: unknown): Reply => ({ status, body: JSON.stringify(body) });
const pageOf = (url: string): number => Number(new URLSearchParams(url.split('?')[1] ?? '').get('page') ?? 1);

function writeConfig(path: string, db: string, server: TestServer, extra: Record<string, unknown>): void {
  writeFileSync(
    path,
    JSON.stringify({
      database: db,
      apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, callsBaseUrl: `${server.url}/calls/v3`, chatBaseUrl: `${server.url}/chat/v3` }],
      pageSize: 10,
      maxAttempts: 1,
      ...extra,
    }),
  );
}

function lastRun(db: string): { status: string; error: string | null } {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare('select status, error from sync_runs order by id desc limit 1').get() as { status: string; error: string | null };
  } finally {
    d.close();
  }
}

describe('caps on endless listings', () => {
  let server: TestServer | undefined;
  const tmp = tempDir('callsync-limits-');
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('List Calls with endless distinct pages: the run stops at maxPagesPerRun with one line naming the cap', async () => {
    const at = Math.floor(Date.now() / 1000) - 86_400;
    const byId = new Map<string, Record<string, unknown>>();
    let listRequests = 0;
    server = await startServer((req) => {
      const path = req.url.split('?')[0]!;
      if (path === '/calls/v3/calls') {
        listRequests++;
        const page = pageOf(req.url);
        // Every page new ids, a full page, no total, no total_pages: nothing says the end is near.
        const data = page > GIVE_UP_AFTER ? [] : Array.from({ length: 10 }, (_, i) => call(`v1.us.endless.${page}-${i}`, at - page * 60 - i, { type: 'user', id: 'user-2' }));
        for (const c of data) byId.set(String(c.sessionId), c);
        return json(200, { data, meta: { pagination: { count: data.length, per_page: 10, current_page: page } } });
      }
      const one = byId.get(decodeURIComponent(path.replace('/calls/v3/calls/', '')));
      return one ? json(200, { data: one }) : json(404, { error: { code: 'ERR_NOT_FOUND', message: 'no such call' } });
    });
    const db = join(tmp.dir, 'pages.db');
    const cfg = join(tmp.dir, 'pages.json');
    writeConfig(cfg, db, server, { maxPagesPerRun: 5 });

    const res = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });

    expect(res.code).toBe(1);
    expect(listRequests).toBeLessThanOrEqual(5);
    const lines = res.stderr.split('\n').filter((l) => !l.startsWith('{') && l.includes('maxPagesPerRun')); // not counting the JSON log line
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/did not end within 5 pages \(maxPagesPerRun\).*raise maxPagesPerRun in the config/);
    const run = lastRun(db);
    expect(run.status).toBe('failed');
    expect(run.error).toContain('maxPagesPerRun');
  }, 60_000);

  it('List Group Members with endless pages: the app fails loudly at maxMembersPerGroup', async () => {
    const at = Math.floor(Date.now() / 1000) - 86_400;
    const calls = [call('v1.us.group.1', at, { type: 'group', id: 'g-endless' }), call('v1.us.group.2', at + 60, { type: 'user', id: 'user-2' })];
    let memberRequests = 0;
    server = await startServer((req) => {
      const path = req.url.split('?')[0]!;
      if (path === '/calls/v3/calls') {
        const page = pageOf(req.url);
        const data = page <= 1 ? calls : [];
        return json(200, { data, meta: { pagination: { total: calls.length, count: data.length, per_page: 10, current_page: Math.max(1, page), total_pages: 1 } } });
      }
      const one = calls.find((c) => path === `/calls/v3/calls/${String(c.sessionId)}`);
      if (one) return json(200, { data: one });
      if (path === '/chat/v3/groups/g-endless/members') {
        memberRequests++;
        const page = pageOf(req.url);
        // 20 new members a page, the page size echoed, no total: an endless group.
        const data = page > GIVE_UP_AFTER ? [] : Array.from({ length: 20 }, (_, i) => ({ uid: `member-${page}-${i}`, name: 'm', scope: 'participant', joinedAt: 1_700_000_000 }));
        return json(200, { data, meta: { pagination: { count: data.length, per_page: 20, current_page: page } } });
      }
      return json(404, { error: { code: 'ERR_NOT_FOUND', message: 'nothing here' } });
    });
    const db = join(tmp.dir, 'members.db');
    const cfg = join(tmp.dir, 'members.json');
    writeConfig(cfg, db, server, { maxMembersPerGroup: 50 });

    const res = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });

    expect(res.code).toBe(1);
    expect(memberRequests).toBeLessThanOrEqual(4);
    expect(res.stderr).toMatch(/app1 \(us\): FAILED/);
    const lines = res.stderr.split('\n').filter((l) => l.startsWith('  error:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/g-endless listed more than 50 members \(maxMembersPerGroup\).*raise maxMembersPerGroup in the config/);
    expect(lastRun(db).status).toBe('failed');
  }, 60_000);
});
