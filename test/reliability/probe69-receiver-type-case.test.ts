import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { settingsAt } from './support/matrix.js';
import { pathAndPage, startServer, viaProxy, type Reply, type TestServer } from './support/servers.js';

/**
 * `receiverType` written in another case (`GROUP`, `Group`: an enum serialised by name). A call's
 * status is read whatever its case; whether a call went to a group was not: its group's members
 * were never listed, and the run said ok with every member missing (probe69).
 */
const APP = 'app1';
const CALLS = `/${APP}.call-us/v3/calls`;
const NOW = Math.floor(Date.now() / 1000);
type Json = Record<string, unknown>;

const MEMBERS: Record<string, string[]> = { 'g-upper': ['m1', 'm2', 'm3'], 'g-title': ['m4', 'm5'], 'g-plain': ['m6'] };

function call(sessionId: string, at: number, receiverType: string, receiver: string): Json {
  const p = (uid: string): Json => ({ uid, totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, deviceId: `d-${uid}`, isJoined: true, joinedAt: at, leftAt: at + 120, state: 'ended' });
  return {
    sessionId, type: 'audio', mode: 'call', receiverType, receiver, initiator: 'u1', status: 'ended',
    totalAudioMinutes: 4, totalVideoMinutes: 0, totalDurationInMinutes: 4, totalDuration: '00:02:00', totalParticipants: 2,
    hasRecording: false, initiatedAt: at, startedAt: at, endedAt: at + 120, participants: [p('u1'), p('u2')],
  };
}

describe('probe69: receiverType in another case', () => {
  const tmp = tempDir('callsync-probe69-rtype-');
  let server: TestServer;
  const calls = [call('c-upper', NOW - 3_600, 'GROUP', 'g-upper'), call('c-title', NOW - 4_200, ' Group', 'g-title'), call('c-plain', NOW - 4_800, 'group', 'g-plain')];

  beforeAll(async () => {
    server = await startServer((req): Reply => {
      const { path, page } = pathAndPage(req.url);
      if (path === CALLS) {
        const entries = page === 1 ? calls : [];
        return { status: 200, body: JSON.stringify({ data: entries, meta: { pagination: { total: calls.length, count: entries.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
      }
      const m = /^\/app1\.api-us\/v3\/groups\/([^/]+)\/members$/.exec(path);
      if (m) {
        const all = MEMBERS[decodeURIComponent(m[1]!)];
        if (!all) return { status: 404, body: '{"error":{"code":"ERR_GUID_NOT_FOUND","message":"no such group"}}' };
        const data = page === 1 ? all.map((uid) => ({ uid, name: uid, scope: 'participant', joinedAt: 1_700_000_000 })) : [];
        return { status: 200, body: JSON.stringify({ data, meta: { pagination: { total: all.length, count: data.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
      }
      const c = calls.find((x) => `${CALLS}/${encodeURIComponent(x.sessionId as string)}` === path);
      if (c) return { status: 200, body: JSON.stringify({ data: c }) };
      return { status: 404, body: '{"error":{"code":"ERR_CALL_SESSION_NOT_FOUND","message":"no such call"}}' };
    });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  for (const detailFetch of ['auto', 'always'] as const) {
    it(`detailFetch ${detailFetch}: every group's members are synced, ok`, async () => {
      const db = join(tmp.dir, `${detailFetch}.db`);
      const r = (await syncWith(settingsAt(viaProxy(server.url, APP), db, { detailFetch, concurrency: 2 }))).results[0]!;
      const members = await withStore(db, ({ db: k }) => k.selectFrom('group_members').select(['guid', 'uid']).orderBy('guid').orderBy('uid').execute());
      const truth = Object.entries(MEMBERS).flatMap(([guid, uids]) => uids.map((uid) => ({ guid, uid }))).sort((a, b) => a.guid.localeCompare(b.guid) || a.uid.localeCompare(b.uid));
      if (r.status === 'ok') expect(members).toEqual(truth);
      expect(r.status, r.error).toBe('ok');
    });
  }
});
