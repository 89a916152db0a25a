import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_ENV, TEST_KEY, tempDir, withStore } from '../helpers/harness.js';
import { runCli } from '../helpers/cli.js';
import { pathAndPage, startServer, viaProxy, type Reply, type TestServer } from './support/servers.js';

/**
 * A call's times written as ISO 8601 text without an offset are UTC (README, step 2). A
 * transcription's times were read with Date.parse alone, which takes such text in the machine's
 * zone: on a host in Asia/Kolkata each was stored 5.5 hours early, ok (probe69).
 */
const APP = 'app1';
const CALLS = `/${APP}.call-us/v3/calls`;
const NOW = Math.floor(Date.now() / 1000);
const AT = NOW - 3_600;
const iso = (t: number, sep: string): string => new Date(t * 1000).toISOString().slice(0, 19).replace('T', sep);

const theCall = {
  sessionId: 'with-transcript', type: 'audio', mode: 'call', receiverType: 'user', receiver: 'u2', initiator: 'u1', status: 'ended',
  totalAudioMinutes: 4, totalVideoMinutes: 0, totalDurationInMinutes: 4, totalDuration: '00:02:00', totalParticipants: 2,
  hasRecording: false, hasTranscription: true, initiatedAt: AT, startedAt: AT, endedAt: AT + 120,
  participants: ['u1', 'u2'].map((uid) => ({ uid, totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, deviceId: `d-${uid}`, isJoined: true, joinedAt: AT, leftAt: AT + 120, state: 'ended' })),
  transcriptions: [{ tid: 't1', roomName: 'room', transcriptUrl: 'https://tr.example/t1.txt', startTime: iso(AT, 'T'), endTime: iso(AT + 120, ' '), transcriptDate: `${iso(AT + 180, 'T')}.250` }],
};

describe('probe69: transcription times as ISO text without an offset', () => {
  const tmp = tempDir('callsync-probe69-tz-');
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((req): Reply => {
      const { path, page } = pathAndPage(req.url);
      if (path === CALLS) {
        const entries = page === 1 ? [theCall] : [];
        return { status: 200, body: JSON.stringify({ data: entries, meta: { pagination: { total: 1, count: entries.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
      }
      if (path === `${CALLS}/with-transcript`) return { status: 200, body: JSON.stringify({ data: theCall }) };
      return { status: 404, body: '{"error":{"code":"ERR_CALL_SESSION_NOT_FOUND","message":"no such call"}}' };
    });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('are stored as UTC whatever the zone of the machine that syncs', async () => {
    const database = join(tmp.dir, 'tz.db');
    const config = join(tmp.dir, 'tz.json');
    writeFileSync(config, JSON.stringify({ database, detailFetch: 'always', liveMaxDays: 3650, apps: [{ appId: APP, region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...viaProxy(server.url, APP) }] }));
    const run = await runCli(['sync', '--config', config, '--json'], { [KEY_ENV]: TEST_KEY, TZ: 'Asia/Kolkata' });
    expect(run.code, run.stderr).toBe(0);
    await withStore(database, async ({ db }) => {
      const t = await db.selectFrom('call_transcriptions').select(['start_time', 'end_time', 'transcript_date']).where('session_id', '=', 'with-transcript').executeTakeFirstOrThrow();
      expect(t).toEqual({ start_time: AT, end_time: AT + 120, transcript_date: AT + 180 });
    });
  });
});
