import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { settingsAt } from './support/matrix.js';
import { pathAndPage, startServer, viaProxy, type Reply, type TestServer } from './support/servers.js';

/**
 * A recording (or transcription) stated twice in one answer, its URL signed anew each time, is one
 * file: stored once (README, step 3). With a `rid` it was; without one (rid is documented, but
 * nothing says every recording carries it: the SDK's `recordingUrl` carries none) each copy got a
 * key of its own (`<sessionId>:<index>`), so both were stored and the recording's minutes counted
 * twice, while the run said ok (probe69).
 */
const APP = 'app1';
const CALLS = `/${APP}.call-us/v3/calls`;
const NOW = Math.floor(Date.now() / 1000);
type Json = Record<string, unknown>;

function call(sessionId: string, at: number, o: Json): Json {
  const p = (uid: string): Json => ({ uid, totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, deviceId: `d-${uid}`, isJoined: true, joinedAt: at, leftAt: at + 120, state: 'ended' });
  return {
    sessionId, type: 'audio', mode: 'call', receiverType: 'user', receiver: 'u2', initiator: 'u1', status: 'ended',
    totalAudioMinutes: 4, totalVideoMinutes: 0, totalDurationInMinutes: 4, totalDuration: '00:02:00', totalParticipants: 2,
    hasRecording: false, initiatedAt: at, startedAt: at, endedAt: at + 120, participants: [p('u1'), p('u2')], ...o,
  };
}

const AT = NOW - 3_600;
/** One recording, stated with a fresh signature on every mention; `extra` another recording, its own file. */
const recording = (sig: number): Json => ({ recording_url: `https://rec.example/calls/c1.mp4?X-Signature=${sig}`, startTime: AT, endTime: AT + 120, duration: 2 });
const other: Json = { recording_url: 'https://rec.example/calls/c1-screen.mp4?X-Signature=9', startTime: AT, endTime: AT + 120, duration: 2 };
const transcription = (sig: number): Json => ({ roomName: 'room-1', transcriptUrl: `https://tr.example/c1.txt?X-Signature=${sig}`, startTime: AT, endTime: AT + 120 });

describe('probe69: media without an id, stated twice in one answer', () => {
  const tmp = tempDir('callsync-probe69-media-');
  let server: TestServer;
  let sig = 0;
  /** The call as the service states it now: each mention of a file signed anew. */
  const wire = (): Json[] => [
    call('rec-twice', AT, { hasRecording: true, recordings: [recording(++sig), recording(++sig), other] }),
    call('tr-twice', AT - 600, { hasTranscription: true, transcriptions: [transcription(++sig), transcription(++sig)] }),
  ];

  beforeAll(async () => {
    server = await startServer((req): Reply => {
      const { path, page } = pathAndPage(req.url);
      if (path === CALLS) {
        const entries = page === 1 ? wire() : [];
        return { status: 200, body: JSON.stringify({ data: entries, meta: { pagination: { total: 2, count: entries.length, per_page: 100, current_page: page, total_pages: 1 } } }) };
      }
      const c = wire().find((x) => `${CALLS}/${encodeURIComponent(x.sessionId as string)}` === path);
      if (c) return { status: 200, body: JSON.stringify({ data: c }) };
      return { status: 404, body: '{"error":{"code":"ERR_CALL_SESSION_NOT_FOUND","message":"no such call"}}' };
    });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  for (const detailFetch of ['auto', 'always'] as const) {
    it(`detailFetch ${detailFetch}: each file stored once, its minutes once, ok`, async () => {
      const db = join(tmp.dir, `${detailFetch}.db`);
      const settings = settingsAt(viaProxy(server.url, APP), db, { detailFetch, concurrency: 2 });
      for (let run = 0; run < 2; run++) {
        const r = (await syncWith(settings, run === 1 ? { full: true } : {})).results[0]!;
        expect(r.status, r.error).toBe('ok');
        await withStore(db, async ({ db: k }) => {
          const rec = await k.selectFrom('calls').select(['recording_rows', 'recording_minutes']).where('session_id', '=', 'rec-twice').executeTakeFirstOrThrow();
          expect(rec).toEqual({ recording_rows: 2, recording_minutes: 4 });
          const files = await k.selectFrom('call_recordings').select('recording_url').where('session_id', '=', 'rec-twice').execute();
          expect(files.map((f) => f.recording_url!.split('?')[0]).sort()).toEqual(['https://rec.example/calls/c1-screen.mp4', 'https://rec.example/calls/c1.mp4']);
          const tr = await k.selectFrom('call_transcriptions').select('transcript_url').where('session_id', '=', 'tr-twice').execute();
          expect(tr.length).toBe(1);
        });
      }
    });
  }
});
