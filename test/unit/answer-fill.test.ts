import { describe, expect, it } from 'vitest';
import { fillFromStored, withEarlierFields } from '../../src/sync/answer-fill.js';
import type { ApiCall } from '../../src/source/schemas.js';

/** What an answer leaves out, taken from the stored answer, and when that is no answer (probe rounds 11 and 12). */
const participants = [
  { uid: 'u1', totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, isJoined: true, joinedAt: 110, leftAt: 230 },
  { uid: 'u2', totalAudioMinutes: 2, totalVideoMinutes: 0, totalDuration: 2, isJoined: true, joinedAt: 110, leftAt: 230 },
];
const recordings = [{ rid: 'r1', recording_url: 'https://media.example/r1.mp4', startTime: 110, endTime: 230, duration: 2 }];
const ended = { sessionId: 's1', type: 'audio', mode: 'call', receiverType: 'user', receiver: 'u2', initiator: 'u1', status: 'ended', initiatedAt: 100, startedAt: 110, endedAt: 230, totalAudioMinutes: 4, totalVideoMinutes: 0, totalDurationInMinutes: 4, totalParticipants: 2, hasRecording: true, participants, recordings } as unknown as ApiCall;
const without = (call: ApiCall, ...keys: string[]): ApiCall => Object.fromEntries(Object.entries(call).filter(([k]) => !keys.includes(k))) as unknown as ApiCall;
const stored = (call: ApiCall, lackedDetails = false): { call: ApiCall; lackedDetails: boolean } => ({ call, lackedDetails });

describe('fillFromStored', () => {
  it('an answer that states everything is not filled', () => {
    expect(fillFromStored(ended, stored(ended))).toBeUndefined();
  });

  it('participants left out, the stored answer final and settled, the same call minutes: filled, not provisional', () => {
    const r = fillFromStored(without(ended, 'participants'), stored(ended));
    expect(r?.provisional).toBe(false);
    expect(r?.call.participants).toEqual(participants);
  });

  it('the stored answer was of a live call: any minutes or participants it supplies are provisional (round 12 F1)', () => {
    const live = { ...without(ended, 'endedAt'), status: 'ongoing', totalAudioMinutes: 1 } as unknown as ApiCall;
    expect(fillFromStored(without(ended, 'totalAudioMinutes'), stored(live))?.provisional).toBe(true);
    expect(fillFromStored(without(ended, 'participants'), stored(live))?.provisional).toBe(true);
  });

  it('the stored payload is a list entry kept because Get Call failed: provisional (round 12 F3)', () => {
    expect(fillFromStored(without(ended, 'recordings'), stored(ended, true))?.provisional).toBe(true);
  });

  it('participants left out while the answer states other call minutes than the stored answer: provisional (round 12 F4)', () => {
    const corrected = { ...without(ended, 'participants'), totalAudioMinutes: 8, totalDurationInMinutes: 8 } as unknown as ApiCall;
    expect(fillFromStored(corrected, stored(ended))?.provisional).toBe(true);
  });

  it('the call’s minutes supplied under participants that no longer add up to them: provisional (round 14 A1); a late participant coming to add up: not', () => {
    const more = participants.map((p) => ({ ...p, totalAudioMinutes: 3, totalDuration: 3 }));
    const noMinutes = without(ended, 'totalAudioMinutes', 'totalVideoMinutes', 'totalDurationInMinutes');
    expect(fillFromStored({ ...noMinutes, participants: more } as unknown as ApiCall, stored(ended))?.provisional).toBe(true);
    const late = { ...ended, participants: [participants[0], { ...participants[1], totalAudioMinutes: 0, totalDuration: 0 }] } as unknown as ApiCall;
    expect(fillFromStored(noMinutes, stored(late))?.provisional).toBe(false);
  });

  it('only the start time supplied, from a live answer: not provisional (it does not change)', () => {
    const live = { ...without(ended, 'endedAt'), status: 'ongoing' } as unknown as ApiCall;
    expect(fillFromStored(without(ended, 'startedAt'), stored(live))).toEqual({ call: ended, provisional: false });
  });
});

describe('withEarlierFields', () => {
  it('hasRecording false without recordings: the earlier recordings are not taken (round 12 F2); transcriptions likewise', () => {
    const gone = { ...without(ended, 'recordings'), hasRecording: false } as unknown as ApiCall;
    expect(withEarlierFields(ended, gone).recordings).toBeUndefined();
    const withTranscripts = { ...ended, hasTranscription: true, transcriptions: [{ tid: 't1' }] } as unknown as ApiCall;
    expect(withEarlierFields(withTranscripts, { ...ended, hasTranscription: false } as unknown as ApiCall).transcriptions).toBeUndefined();
  });
  it('a field the answer states, even null, is the answer’s', () => {
    expect(withEarlierFields(ended, { ...ended, endedAt: null } as unknown as ApiCall).endedAt).toBeNull();
  });
});
