import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { settingsAt } from './support/matrix.js';
import { pathAndPage, startServer, viaProxy, type Reply, type TestServer } from './support/servers.js';

/**
 * Field shapes a real service plausibly writes, each of which kept its whole call aside in
 * rejected_records while the run said ok (a hostile-fake probe, round 6): null for an optional
 * participant field, a receiver written as a number, a recording's duration as a timer, one
 * recording as an object instead of an array, a time with a space for the T. And the rule for what
 * cannot be read: a listed call that neither List Calls nor Get Call gives in a form that parses is
 * kept aside, and the run says so (partial), on every run until it can be read.
 */
const APP = 'app1';
const CALLS_PREFIX = `/${APP}.call-us/v3/calls`;
const NOW = Math.floor(Date.now() / 1000);

type Json = Record<string, unknown>;

function call(sessionId: string, at: number, overrides: Json = {}): Json {
  const p = (uid: string, offset: number): Json => ({ uid, totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, deviceId: `d-${uid}`, isJoined: true, joinedAt: at + offset, leftAt: at + offset + 120, state: 'ended' });
  return {
    sessionId, type: 'audio', mode: 'call', receiverType: 'user', receiver: 'u2', initiator: 'u1', status: 'ended',
    totalAudioMinutes: 2, totalVideoMinutes: 0, totalDurationInMinutes: 2, totalDuration: '00:02:00', totalParticipants: 2,
    hasRecording: false, initiatedAt: at, startedAt: at, endedAt: at + 120, participants: [p('u1', 0), p('u2', 0)],
    ...overrides,
  };
}

const sqlTime = (t: number): string => new Date(t * 1000).toISOString().slice(0, 19).replace('T', ' ');

function shapes(): Json[] {
  const at = (i: number): number => NOW - 3_600 - i * 600;
  const recording = (t: number, duration: unknown): Json => ({ rid: 'r1', recording_url: 'https://rec.example/r1', startTime: t, endTime: t + 120, duration });
  const parts = (c: Json, extra: Json): Json[] => (c.participants as Json[]).map((p) => ({ ...p, ...extra }));
  const base = (id: string, i: number): Json => call(id, at(i));
  return [
    ((c) => ({ ...c, participants: parts(c, { state: null }) }))(base('state-null', 0)),
    ((c) => ({ ...c, participants: parts(c, { isJoined: null }) }))(base('isjoined-null', 1)),
    ((c) => ({ ...c, participants: parts(c, { totalDuration: null }) }))(base('total-duration-null', 2)),
    { ...base('receiver-number', 3), receiver: 42, initiator: 7 },
    { ...base('recording-timer', 4), hasRecording: true, recordings: [recording(at(4), '00:02:00')] },
    { ...base('recording-object', 5), hasRecording: true, recordings: recording(at(5), 2) },
    { ...base('started-sql-time', 6), startedAt: sqlTime(at(6)) },
  ];
}

describe('field shapes a service plausibly writes', () => {
  const tmp = tempDir('callsync-shapes-');
  let server: TestServer;
  const calls: Json[] = [];
  /** Session ids whose record is served unreadable (in List Calls and Get Call alike). */
  const broken = new Set<string>();
  const wire = (c: Json): Json => (broken.has(c.sessionId as string) ? { ...c, totalAudioMinutes: 'NaN' } : c);

  beforeAll(async () => {
    calls.push(...shapes(), call('unreadable', NOW - 9 * 600));
    broken.add('unreadable');
    server = await startServer((req): Reply => {
      const { path, page } = pathAndPage(req.url);
      if (path === CALLS_PREFIX) {
        const entries = page === 1 ? calls.map(wire) : [];
        return { status: 200, body: JSON.stringify({ data: entries, meta: { pagination: { total: calls.length, count: entries.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
      }
      const c = calls.find((x) => `${CALLS_PREFIX}/${encodeURIComponent(x.sessionId as string)}` === path);
      if (c) return { status: 200, body: JSON.stringify({ data: wire(c) }) };
      return { status: 404, body: '{"error":{"code":"ERR_CALL_SESSION_NOT_FOUND","message":"no such call"}}' };
    });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('each is stored with its minutes; the one call that cannot be read makes every run partial until it can', async () => {
    const db = join(tmp.dir, 'shapes.db');
    const settings = settingsAt(viaProxy(server.url, APP), db, { detailFetch: 'auto', concurrency: 4 });
    const first = (await syncWith(settings)).results[0]!;
    expect(first.status).toBe('partial');
    expect(first.unreadCalls).toBe(1);
    expect(first.error).toMatch(/^[^\n]*1 listed call\(s\) could be read neither from List Calls nor from Get Call \(first: unreadable: totalAudioMinutes: .*\); they are kept aside in rejected_records, not in calls/);

    await withStore(db, async ({ db: k }) => {
      const rows = await k.selectFrom('calls').select(['session_id', 'participant_total_minutes', 'recording_minutes', 'recording_rows', 'receiver', 'initiator', 'started_at']).orderBy('session_id').execute();
      const by = new Map(rows.map((r) => [r.session_id, r]));
      expect([...by.keys()].sort()).toEqual(shapes().map((c) => c.sessionId as string).sort());
      for (const r of rows) expect(r.participant_total_minutes, r.session_id).toBe(4);
      expect(by.get('receiver-number')).toMatchObject({ receiver: '42', initiator: '7' });
      expect(by.get('recording-timer')).toMatchObject({ recording_rows: 1, recording_minutes: 2 });
      expect(by.get('recording-object')).toMatchObject({ recording_rows: 1, recording_minutes: 2 });
      const sql = shapes().find((c) => c.sessionId === 'started-sql-time')!;
      expect(by.get('started-sql-time')!.started_at).toBe(sql.initiatedAt);
      const joined = await k.selectFrom('call_participants').select(['session_id', 'is_joined', 'state']).where('session_id', 'in', ['isjoined-null', 'state-null']).execute();
      expect(joined.map((p) => [p.session_id, p.is_joined, p.state]).sort()).toEqual([['isjoined-null', 1, 'ended'], ['isjoined-null', 1, 'ended'], ['state-null', 1, null], ['state-null', 1, null]]);
    });

    // Still unreadable: partial again (never ok with the call missing).
    const second = (await syncWith(settings)).results[0]!;
    expect(second.status).toBe('partial');
    expect(second.unreadCalls).toBe(1);

    // The service writes it readably: stored, ok.
    broken.clear();
    const third = (await syncWith(settings)).results[0]!;
    expect(third.status, third.error).toBe('ok');
    await withStore(db, async ({ db: k }) => {
      const row = await k.selectFrom('calls').select(['participant_total_minutes']).where('session_id', '=', 'unreadable').executeTakeFirst();
      expect(row?.participant_total_minutes).toBe(4);
    });
  });
});
