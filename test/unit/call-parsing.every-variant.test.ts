import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiCallToRows, listEntryIsComplete, parseCall, participantTotalMinutes } from '../../src/transform/call-rows.js';
import { GetCallEnvelopeSchema } from '../../src/source/schemas.js';

const published = JSON.parse(readFileSync(new URL('../fixtures/published-call.json', import.meta.url), 'utf8')) as { data: Record<string, unknown> };
const ctx = { appId: 'a', region: 'us', now: 1_700_000_000, source: 'detail' as const, listFingerprint: null };

function rowsOf(raw: unknown) {
  const p = parseCall(raw, 'k');
  if (!p.ok) throw new Error(`rejected: ${p.reason}`);
  return apiCallToRows(p.call, raw, ctx);
}

describe('call parsing accepts every documented variant', () => {
  it('parses the published Get Call example exactly', () => {
    const rows = rowsOf(published.data);
    expect(rows.call).toMatchObject({
      session_id: published.data.sessionId,
      type: 'audio', mode: 'call', receiver_type: 'user', receiver: 'cometchat-uid-2', initiator: 'cometchat-uid-8',
      status: 'ended', is_final: 1, total_duration: '00:00:19', total_duration_seconds: 19, total_participants: 2,
      has_recording: 0, initiated_at: 1692368113, started_at: 1692368127, ended_at: 1692368146,
    });
    expect(rows.call.total_audio_minutes).toBeCloseTo(19 / 60, 12);
    expect(rows.participants.map((p) => [p.uid, p.total_duration_minutes, p.is_joined, p.joined_at])).toEqual([
      ['cometchat-uid-2', 0.23333333333333334, 1, 1692368132],
      ['cometchat-uid-8', 0.26666666666666666, 1, 1692368128],
    ]);
    expect(JSON.parse(rows.payload.raw_json)).toEqual(published.data);
  });

  it('unwraps both Get Call envelopes', () => {
    const modern = GetCallEnvelopeSchema.parse(published);
    const legacy = GetCallEnvelopeSchema.parse({ data: [published.data] });
    expect(Array.isArray(modern.data)).toBe(false);
    expect(Array.isArray(legacy.data) && legacy.data[0]).toEqual(published.data);
  });

  it('reads participant minutes from either spelling, and from SDK spellings of device and join', () => {
    const call = {
      ...published.data,
      participants: [
        { uid: 'u1', totalAudioMinutes: 1, totalVideoMinutes: 0, totalDurationInMinutes: 1.5, deviceId: 7, isJoined: true, joinedAt: 1, leftAt: 2, state: 'ended' },
        { uid: 'u2', totalAudioMinutes: 0.5, totalVideoMinutes: 0, totalDuration: 0.5, deviceID: 'dev-b', hasJoined: true, joinedAt: 1, leftAt: 2, state: 'ended' },
        { uid: 'u3', totalAudioMinutes: 0, totalVideoMinutes: 0, isJoined: false, state: 'unanswered', totalDuration: 0 },
        { uid: 'u4', totalAudioMinutes: '2.25', totalVideoMinutes: '0', isJoined: 'true', joinedAt: '1692368128', leftAt: 1692368144000 },
      ],
    };
    const rows = rowsOf(call);
    expect(rows.participants.map((p) => [p.uid, p.device_id, p.total_duration_minutes, p.is_joined, p.left_at])).toEqual([
      ['u1', '7', 1.5, 1, 2],
      ['u2', 'dev-b', 0.5, 1, 2],
      ['u3', '', 0, 0, null],
      ['u4', '', 2.25, 1, 1692368144],
    ]);
  });

  it('takes initiator and receiver from strings, SDK objects and the legacy entities nesting', () => {
    const { initiator: _i, receiver: _r, ...rest } = published.data;
    expect(rowsOf({ ...rest, initiator: { uid: 'a' }, receiver: { guid: 'g' } }).call).toMatchObject({ initiator: 'a', receiver: 'g' });
    expect(rowsOf({ ...rest, entities: { initiator: { entity: { uid: 'x' } }, receiver: { entity: 'y' } } }).call).toMatchObject({ initiator: 'x', receiver: 'y' });
  });

  it('stores unknown statuses as they come, and knows which statuses are live', () => {
    for (const status of ['busy', 'cancelled', 'missed', 'teleported']) expect(rowsOf({ ...published.data, status }).call).toMatchObject({ status, is_final: 1 });
    for (const status of ['initiated', 'ongoing']) expect(rowsOf({ ...published.data, status }).call.is_final).toBe(0);
  });

  it('reads recordings from the array and from the single recordingUrl variant', () => {
    const arr = rowsOf({ ...published.data, hasRecording: true, recordings: [{ rid: 'r1', recording_url: 'https://x/r1.mp4', startTime: 1, endTime: 61, duration: 1 }] });
    expect(arr.recordings).toEqual([{ app_id: 'a', session_id: published.data.sessionId, rid: 'r1', duration_minutes: 1, start_time: 1, end_time: 61, recording_url: 'https://x/r1.mp4' }]);
    // ISO times, as a call's own may be (probe round 13, L2: the whole answer was unusable).
    const iso = rowsOf({ ...published.data, hasRecording: true, recordings: [{ rid: 'r1', startTime: '1970-01-01T00:00:01Z', endTime: '1970-01-01 00:01:01', duration: 1 }] });
    expect(iso.recordings[0]).toMatchObject({ start_time: 1, end_time: 61 });
    const single = rowsOf({ ...published.data, hasRecording: true, recordingUrl: 'https://x/one.mp4' });
    expect(single.recordings).toHaveLength(1);
    expect(single.recordings[0]).toMatchObject({ rid: `${published.data.sessionId}:recordingUrl`, recording_url: 'https://x/one.mp4', duration_minutes: null });
    expect(single.call.has_recording).toBe(1);
  });

  it('drops only the elements of transcriptions that are not transcriptions (a null cost every one of them)', () => {
    const rows = rowsOf({ ...published.data, hasTranscription: true, transcriptions: [null, { tid: 't1', transcriptUrl: 'https://x/t1' }, 42, { tid: 't2' }] });
    expect(rows.transcriptions.map((t) => t.tid)).toEqual(['t1', 't2']);
  });

  it('reads times written as ISO 8601 text or left empty, participant uids written as numbers and participant minutes written as null (each kept a call out of calls)', () => {
    const p0 = (published.data.participants as Record<string, unknown>[])[0]!;
    const iso = (t: number): string => new Date(t * 1000).toISOString();
    const started = published.data.startedAt as number;
    const ended = published.data.endedAt as number;
    const rows = rowsOf({ ...published.data, startedAt: iso(started), endedAt: iso(ended), participants: [{ ...p0, uid: 12345, totalVideoMinutes: null, joinedAt: iso(started), leftAt: iso(ended) }] });
    expect(rows.call).toMatchObject({ started_at: started, ended_at: ended });
    expect(rows.participants[0]).toMatchObject({ uid: '12345', total_video_minutes: null, joined_at: started, left_at: ended });
    // Without an offset, UTC whatever the machine's zone (Node reads TZ again when it is set); with one, that offset.
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      expect(rowsOf({ ...published.data, startedAt: iso(started).slice(0, 19) }).call.started_at).toBe(started);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    expect(rowsOf({ ...published.data, startedAt: iso(started).replace(/\.\d{3}Z$/, '+02:00') }).call.started_at).toBe(started - 7200);
    const unstarted = rowsOf({ ...published.data, status: 'unanswered', startedAt: '', endedAt: '' });
    expect(unstarted.call).toMatchObject({ started_at: null, ended_at: null });
    const bad = parseCall({ ...published.data, startedAt: 'yesterday' }, 'k');
    expect(bad.ok ? '' : bad.reason).toMatch(/^startedAt: not a finite number, a string holding one, nor an ISO 8601 time/);
  });

  it('keeps recordings and transcriptions that share an id but differ (parts), and one of each listed twice alike', () => {
    const part = (url: string, from: number) => ({ rid: 'r1', recording_url: url, startTime: from, endTime: from + 30, duration: 0.5 });
    const rows = rowsOf({ ...published.data, hasRecording: true, recordings: [part('https://x/a', 1), part('https://x/b', 31), part('https://x/a', 1)], transcriptions: [{ tid: 't', startTime: 1, transcriptUrl: 'a' }, { tid: 't', startTime: 31, transcriptUrl: 'b' }] });
    expect(rows.recordings.map((r) => [r.rid, r.recording_url])).toEqual([['r1', 'https://x/a'], ['r1#2', 'https://x/b']]);
    expect(rows.transcriptions.map((t) => [t.tid, t.transcript_url])).toEqual([['t', 'a'], ['t#2', 'b']]);
  });

  it('keeps a recording or transcription repeated with only its URL differing once (URLs are signed anew), the first URL', () => {
    const rows = rowsOf({ ...published.data, hasRecording: true, recordings: [{ rid: 'r1', recording_url: 'https://x/a?sig=1', startTime: 1, endTime: 31, duration: 0.5 }, { rid: 'r1', recording_url: 'https://x/a?sig=2', startTime: 1, endTime: 31, duration: 0.5 }], transcriptions: [{ tid: 't', transcriptUrl: 'a?1' }, { tid: 't', transcriptUrl: 'a?2' }] });
    expect(rows.recordings.map((r) => [r.rid, r.recording_url])).toEqual([['r1', 'https://x/a?sig=1']]);
    expect(rows.transcriptions.map((t) => [t.tid, t.transcript_url])).toEqual([['t', 'a?1']]);
  });

  it('keeps unknown fields in raw_json', () => {
    const raw = { ...published.data, x_extra: { a: { b: { c: [1, 2] } } } };
    expect(JSON.parse(rowsOf(raw).payload.raw_json).x_extra).toEqual({ a: { b: { c: [1, 2] } } });
  });

  it('rejects malformed records with a reason naming the field, and never throws', () => {
    const cases: [unknown, string][] = [
      [{ ...published.data, type: 42 }, 'type'],
      [{ ...published.data, participants: 'oops' }, 'participants'],
      [{ ...published.data, startedAt: 'yesterday' }, 'startedAt'],
      [{ ...published.data, totalAudioMinutes: 'NaN' }, 'totalAudioMinutes'],
      [{ ...published.data, totalAudioMinutes: Number.POSITIVE_INFINITY }, 'totalAudioMinutes'],
      [{ type: 'audio' }, 'sessionId'],
    ];
    for (const [raw, field] of cases) {
      const p = parseCall(raw, 'fallback');
      expect(p.ok).toBe(false);
      if (!p.ok) expect(p.reason).toContain(field);
    }
    for (const raw of [null, 3, 'x', [], [1], { sessionId: 5 }]) expect(parseCall(raw, 'fallback')).toMatchObject({ ok: false, key: 'fallback' });
  });

  it('treats a list entry as complete only when participants (at least their count) and recordings are all there', () => {
    const p = parseCall(published.data, 'k');
    if (!p.ok) throw new Error('fixture');
    expect(listEntryIsComplete(p.call)).toBe(true);
    expect(listEntryIsComplete({ ...p.call, participants: undefined })).toBe(false);
    expect(listEntryIsComplete({ ...p.call, totalParticipants: 3 })).toBe(false);
    // More entries than the count: nothing can be missing (the count is inconsistent; reconciliation says so).
    expect(listEntryIsComplete({ ...p.call, totalParticipants: 1 })).toBe(true);
    expect(listEntryIsComplete({ ...p.call, totalParticipants: null })).toBe(false);
    expect(listEntryIsComplete({ ...p.call, hasRecording: true })).toBe(false);
    expect(listEntryIsComplete({ ...p.call, status: 'ongoing' })).toBe(false);
  });

  it('derives participant minutes from audio+video when no total is given', () => {
    expect(participantTotalMinutes({ uid: 'u', totalAudioMinutes: 1, totalVideoMinutes: 2 })).toBe(3);
    expect(participantTotalMinutes({ uid: 'u' })).toBeNull();
  });
});
