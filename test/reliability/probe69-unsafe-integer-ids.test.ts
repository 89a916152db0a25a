import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { settingsAt } from './support/matrix.js';
import { pathAndPage, startServer, viaProxy, type Reply, type TestServer } from './support/servers.js';

/**
 * Identifiers written as JSON numbers past 2^53 (one schema types deviceId as an integer; a service
 * with int64 ids writes them so). JSON.parse rounds them: two devices of one user became one device,
 * its minutes counted once, and uids were stored with other digits (12345678901234567891 as
 * 12345678901234567000), while the run said ok (probe69). The digits the service sent must be what
 * is stored, or the run says it could not read them.
 */
const APP = 'app1';
const CALLS = `/${APP}.call-us/v3/calls`;
const MEMBERS = `/${APP}.api-us/v3/groups/g1/members`;
const NOW = Math.floor(Date.now() / 1000);
type Json = Record<string, unknown>;

/** Wire ids: `big` marks a value the server writes as a bare JSON number (its digits exactly). */
interface Id { text: string; big: boolean }
const BIG_UID_A = '12345678901234567891';
const BIG_UID_B = '12345678901234567893';
const BIG_DEV_A = '9007199254740993';
const BIG_DEV_B = '9007199254740992';
const BIG_MEMBER = '98765432109876543211';

/** JSON text with every `"__N:digits__"` string written as the bare number `digits`. */
const wire = (v: unknown, asNumbers: boolean): string => JSON.stringify(v).replace(/"__N:(\d+)__"/g, (_, d: string) => (asNumbers ? d : `"${d}"`));
const num = (id: Id): string => (id.big ? `__N:${id.text}__` : id.text);

function call(sessionId: string, at: number, parts: { uid: Id; device: Id }[], receiverType: string, receiver: string): Json {
  return {
    sessionId, type: 'audio', mode: 'call', receiverType, receiver, initiator: 'u-init', status: 'ended',
    totalAudioMinutes: 2 * parts.length, totalVideoMinutes: 0, totalDurationInMinutes: 2 * parts.length, totalDuration: '00:02:00',
    totalParticipants: parts.length, hasRecording: false, initiatedAt: at, startedAt: at, endedAt: at + 120,
    participants: parts.map((p) => ({ uid: num(p.uid), deviceId: num(p.device), totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, isJoined: true, joinedAt: at, leftAt: at + 120, state: 'ended' })),
  };
}

const TRUTH = {
  'big-uids': [[BIG_UID_A, 'dev-a'], [BIG_UID_B, 'dev-b']],
  'big-devices': [['u1', BIG_DEV_A], ['u1', BIG_DEV_B]],
  'group-call': [['u1', 'dev-1'], ['u2', 'dev-2']],
} as const;

describe('probe69: integer ids past 2^53', () => {
  const tmp = tempDir('callsync-probe69-ids-');
  let server: TestServer;
  /** Whether the service writes the big ids as bare numbers (true) or as text (false). */
  let asNumbers = true;
  const calls: Json[] = [
    call('big-uids', NOW - 3_600, [{ uid: { text: BIG_UID_A, big: true }, device: { text: 'dev-a', big: false } }, { uid: { text: BIG_UID_B, big: true }, device: { text: 'dev-b', big: false } }], 'user', 'u2'),
    call('big-devices', NOW - 4_200, [{ uid: { text: 'u1', big: false }, device: { text: BIG_DEV_A, big: true } }, { uid: { text: 'u1', big: false }, device: { text: BIG_DEV_B, big: true } }], 'user', 'u2'),
    call('group-call', NOW - 4_800, [{ uid: { text: 'u1', big: false }, device: { text: 'dev-1', big: false } }, { uid: { text: 'u2', big: false }, device: { text: 'dev-2', big: false } }], 'group', 'g1'),
  ];

  beforeAll(async () => {
    server = await startServer((req): Reply => {
      const { path, page } = pathAndPage(req.url);
      if (path === CALLS) {
        const entries = page === 1 ? calls : [];
        return { status: 200, body: wire({ data: entries, meta: { pagination: { total: calls.length, count: entries.length, per_page: 100, current_page: page, total_pages: 1 } } }, asNumbers) };
      }
      if (path === MEMBERS) {
        const members = page === 1 ? [{ uid: `__N:${BIG_MEMBER}__`, name: 'big', scope: 'participant', joinedAt: 1_700_000_000 }] : [];
        return { status: 200, body: wire({ data: members, meta: { pagination: { total: 1, count: members.length, per_page: 100, current_page: page, total_pages: 1 } } }, asNumbers) };
      }
      const c = calls.find((x) => `${CALLS}/${encodeURIComponent(x.sessionId as string)}` === path);
      if (c) return { status: 200, body: wire({ data: c }, asNumbers) };
      return { status: 404, body: '{"error":{"code":"ERR_CALL_SESSION_NOT_FOUND","message":"no such call"}}' };
    });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  for (const detailFetch of ['auto', 'always'] as const) {
    it(`detailFetch ${detailFetch}: never ok with other digits or a device lost; exact once the ids come as text`, async () => {
      asNumbers = true;
      const db = join(tmp.dir, `${detailFetch}.db`);
      const settings = settingsAt(viaProxy(server.url, APP), db, { detailFetch, concurrency: 2 });
      const stored = (): Promise<{ parts: Record<string, string[][]>; members: string[] }> =>
        withStore(db, async ({ db: k }) => {
          const rows = await k.selectFrom('call_participants').select(['session_id', 'uid', 'device_id']).orderBy('session_id').orderBy('seq').execute();
          const parts: Record<string, string[][]> = {};
          for (const r of rows) (parts[r.session_id] ??= []).push([r.uid, r.device_id]);
          const members = (await k.selectFrom('group_members').select('uid').execute()).map((m) => m.uid);
          return { parts, members };
        });
      const exact = (s: { parts: Record<string, string[][]>; members: string[] }): boolean =>
        JSON.stringify(s.parts) === JSON.stringify(TRUTH) && JSON.stringify(s.members) === JSON.stringify([BIG_MEMBER]);

      const first = (await syncWith(settings)).results[0]!;
      const after = await stored();
      // Never ok with the database other than the service's data.
      if (first.status === 'ok') expect(after).toEqual({ parts: TRUTH, members: [BIG_MEMBER] });
      else expect(first.error).toMatch(/^[^\n]*could be read neither.*first: big-uids: participants.0.uid: neither text nor a whole number below 2\^53/);
      // The service writes its ids as text: the next run stores them exactly, ok.
      asNumbers = false;
      const second = (await syncWith(settings)).results[0]!;
      expect(second.status, second.error).toBe('ok');
      const fixed = await stored();
      expect(fixed).toEqual({ parts: TRUTH, members: [BIG_MEMBER] });
      void exact;
    });
  }
});
