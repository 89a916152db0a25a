import { pathAndPage, startServer, type Reply, type TestServer } from './servers.js';

/**
 * A one-app service (app1, us) of ended two-party calls to groups and users whose `receiverType`
 * is written in any case (`GROUP`, ` Group`: an enum serialised by name), with List Group Members
 * for `members`' groups (any other group is not found). probe69 and probe70 read it.
 */
const APP = 'app1';
const CALLS = `/${APP}.call-us/v3/calls`;
type Json = Record<string, unknown>;

/** An ended two-party audio call to `receiver` (a group or a user, as `receiverType` says). */
export function receiverCall(sessionId: string, at: number, receiverType: string, receiver: string): Json {
  const p = (uid: string): Json => ({ uid, totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, deviceId: `d-${uid}`, isJoined: true, joinedAt: at, leftAt: at + 120, state: 'ended' });
  return {
    sessionId, type: 'audio', mode: 'call', receiverType, receiver, initiator: 'u1', status: 'ended',
    totalAudioMinutes: 4, totalVideoMinutes: 0, totalDurationInMinutes: 4, totalDuration: '00:02:00', totalParticipants: 2,
    hasRecording: false, initiatedAt: at, startedAt: at, endedAt: at + 120, participants: [p('u1'), p('u2')],
  };
}

/** Serves `calls` on one page (Get Call too) and each group's `members` on one page. */
export function startReceiverTypeService(calls: readonly Json[], members: Readonly<Record<string, readonly string[]>>): Promise<TestServer> {
  return startServer((req): Reply => {
    const { path, page } = pathAndPage(req.url);
    if (path === CALLS) {
      const entries = page === 1 ? calls : [];
      return { status: 200, body: JSON.stringify({ data: entries, meta: { pagination: { total: calls.length, count: entries.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
    }
    const m = /^\/app1\.api-us\/v3\/groups\/([^/]+)\/members$/.exec(path);
    if (m) {
      const all = members[decodeURIComponent(m[1]!)];
      if (!all) return { status: 404, body: '{"error":{"code":"ERR_GUID_NOT_FOUND","message":"no such group"}}' };
      const data = page === 1 ? all.map((uid) => ({ uid, name: uid, scope: 'participant', joinedAt: 1_700_000_000 })) : [];
      return { status: 200, body: JSON.stringify({ data, meta: { pagination: { total: all.length, count: data.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
    }
    const c = calls.find((x) => `${CALLS}/${encodeURIComponent(x.sessionId as string)}` === path);
    if (c) return { status: 200, body: JSON.stringify({ data: c }) };
    return { status: 404, body: '{"error":{"code":"ERR_CALL_SESSION_NOT_FOUND","message":"no such call"}}' };
  });
}
