import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { settingsAt } from './support/matrix.js';
import { pathAndPage, startServer, viaProxy, type Reply, type TestServer } from './support/servers.js';

/**
 * probe70: since 9a94265 an id written as a JSON number past 2^53 makes its record unreadable (kept
 * aside, the run partial), because JSON.parse rounds the digits. A service whose ids are int64 and
 * written as numbers (one schema types deviceId as an integer; a 64-bit device id) then had every
 * call refused on every run: partial each night for good, and those calls' minutes in no billed
 * total, though the digits were in the text all along. The digits of such ids (uid, deviceId, rid,
 * tid, receiver, initiator, guid…) are now read from the text, so they are stored exactly and the
 * run is ok; safe numbers stay numbers.
 */
const APP = 'app1';
const CALLS = `/${APP}.call-us/v3/calls`;
const MEMBERS = `/${APP}.api-us/v3/groups/g1/members`;
const NOW = Math.floor(Date.now() / 1000);

const DEV_A = '12297829382473034411';
const DEV_B = '-6148914691236517206';
const UID = '18446744073709551557';
const MEMBER = '9223372036854775783';
const RID = '9007199254740993';

/** JSON text with every `"__N:digits__"` string written as the bare number `digits`. */
const wire = (v: unknown): string => JSON.stringify(v).replace(/"__N:(-?\d+)__"/g, (_, d: string) => d);
const n = (digits: string): string => `__N:${digits}__`;

function call(sessionId: string, at: number, receiverType: string, receiver: string): Record<string, unknown> {
  const p = (uid: string, device: string): Record<string, unknown> => ({ uid, deviceId: device, totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, isJoined: true, joinedAt: at, leftAt: at + 120, state: 'ended' });
  return {
    sessionId, type: 'audio', mode: 'call', receiverType, receiver, initiator: n(UID), status: 'ended',
    totalAudioMinutes: 6, totalVideoMinutes: 0, totalDurationInMinutes: 6, totalDuration: '00:02:00', totalParticipants: 3,
    hasRecording: true, recordings: [{ rid: n(RID), recording_url: `https://r.example/${sessionId}.mp4`, startTime: at, endTime: at + 120, duration: 2 }],
    initiatedAt: at, startedAt: at, endedAt: at + 120, participants: [p(n(UID), n(DEV_A)), p(n(UID), n(DEV_B)), p('u2', n('42'))],
  };
}

describe('probe70: int64 ids written as JSON numbers', () => {
  const tmp = tempDir('callsync-probe70-int64-');
  let server: TestServer;
  const calls = [call('c1', NOW - 3_600, 'user', 'u2'), call('c2', NOW - 4_200, 'group', 'g1')];

  beforeAll(async () => {
    server = await startServer((req): Reply => {
      const { path, page } = pathAndPage(req.url);
      if (path === CALLS) {
        const entries = page === 1 ? calls : [];
        return { status: 200, body: wire({ data: entries, meta: { pagination: { total: calls.length, count: entries.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
      }
      if (path === MEMBERS) {
        const members = page === 1 ? [{ uid: n(MEMBER), name: 'big', scope: 'participant', joinedAt: 1_700_000_000 }] : [];
        return { status: 200, body: wire({ data: members, meta: { pagination: { total: 1, count: members.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
      }
      const c = calls.find((x) => `${CALLS}/${encodeURIComponent(x.sessionId as string)}` === path);
      if (c) return { status: 200, body: wire({ data: c }) };
      return { status: 404, body: '{"error":{"code":"ERR_CALL_SESSION_NOT_FOUND","message":"no such call"}}' };
    });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  for (const detailFetch of ['auto', 'always'] as const) {
    it(`detailFetch ${detailFetch}: ok, every id stored with the digits sent, every minute billed`, async () => {
      const db = join(tmp.dir, `${detailFetch}.db`);
      const r = (await syncWith(settingsAt(viaProxy(server.url, APP), db, { detailFetch, concurrency: 2 }))).results[0]!;
      expect(r.status, r.error).toBe('ok');
      const got = await withStore(db, async ({ db: k }) => ({
        parts: (await k.selectFrom('call_participants').select(['session_id', 'uid', 'device_id']).orderBy('session_id').orderBy('seq').execute()).map((p) => [p.session_id, p.uid, p.device_id]),
        calls: (await k.selectFrom('calls').select(['session_id', 'initiator', 'participant_total_minutes']).orderBy('session_id').execute()).map((c) => [c.session_id, c.initiator, c.participant_total_minutes]),
        rids: (await k.selectFrom('call_recordings').select('rid').orderBy('session_id').execute()).map((x) => x.rid),
        members: (await k.selectFrom('group_members').select('uid').execute()).map((m) => m.uid),
      }));
      expect(got).toEqual({
        parts: ['c1', 'c2'].flatMap((s) => [[s, UID, DEV_A], [s, UID, DEV_B], [s, 'u2', '42']]),
        calls: [['c1', UID, 6], ['c2', UID, 6]],
        rids: [RID, RID],
        members: [MEMBER],
      });
    });
  }
});
