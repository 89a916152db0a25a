import { describe, expect, it } from 'vitest';
import { rowsDiffer, type ComparableRows } from '../../src/transform/compare-rows.js';

const call: ComparableRows['call'] = {
  type: 'audio', mode: 'call', receiver_type: 'user', receiver: 'u2', initiator: 'u1', status: 'ended', total_participants: 2, has_recording: 1,
  has_transcription: 0, initiated_at: 100, started_at: 110, ended_at: 200, total_duration_seconds: 90, total_audio_minutes: 3, total_video_minutes: 0, total_duration_minutes: 3,
};
const rows = (recordings: ComparableRows['recordings']): ComparableRows => ({ call, participants: [], recordings, transcriptions: [] });

describe('rowsDiffer on recordings', () => {
  // Probe round 10 (F5): recordings without a rid are keyed by position (`<sessionId>:<i>`); the
  // same two in the other order looked like other recordings, and the settle audit's finding, once
  // made, is kept for good.
  it('the same recordings in another order (rids by position) are the same', () => {
    const a = [{ rid: 's:0', duration_minutes: 1, start_time: 110, end_time: 170 }, { rid: 's:1', duration_minutes: 0.5, start_time: 170, end_time: 200 }];
    const b = [{ rid: 's:0', duration_minutes: 0.5, start_time: 170, end_time: 200 }, { rid: 's:1', duration_minutes: 1, start_time: 110, end_time: 170 }];
    expect(rowsDiffer(rows(a), rows(b))).toEqual([]);
  });
  it('a recording of another length, or one more, differs', () => {
    const a = [{ rid: 'r1', duration_minutes: 1, start_time: 110, end_time: 170 }];
    expect(rowsDiffer(rows(a), rows([{ ...a[0]!, duration_minutes: 2 }]))).toEqual(['recordings']);
    expect(rowsDiffer(rows(a), rows([...a, { rid: 'r2', duration_minutes: 1, start_time: 170, end_time: 230 }]))).toEqual(['recordings']);
  });
  // Probe round 13 (L1): a duration rounded to 4 decimals in one answer and not in the next made
  // the settle audit's finding, and with it a request for every call of the window on every run.
  it('durations within MINUTES_EPSILON are the same; the times must match exactly', () => {
    const a = [{ rid: 'r1', duration_minutes: 1.23456789, start_time: 110, end_time: 170 }];
    expect(rowsDiffer(rows(a), rows([{ ...a[0]!, duration_minutes: 1.2346 }]))).toEqual([]);
    expect(rowsDiffer(rows(a), rows([{ ...a[0]!, end_time: 171 }]))).toEqual(['recordings']);
  });
});

