import { describe, expect, it } from 'vitest';
import type { ApiParticipant } from '../../src/source/schemas.js';
import { distinctParticipants, sessionStatedTwice } from '../../src/transform/participant-entries.js';

const entry = (uid: string, device: string, joinedAt: number, minutes: number): ApiParticipant =>
  ({ uid, deviceId: device, joinedAt, leftAt: joinedAt + 60, totalAudioMinutes: minutes, totalVideoMinutes: 0, totalDuration: minutes }) as ApiParticipant;

describe('distinctParticipants: exact repeats are one entry, anything else is kept', () => {
  const a = entry('u1', 'd1', 100, 1);
  const b = entry('u2', 'd2', 100, 1);
  it('gives the same array when nothing repeats', () => {
    const ps = [a, b, entry('u1', 'd2', 100, 1), entry('u1', 'd1', 101, 1), entry('u1', 'd1', 100, 2)];
    expect(distinctParticipants(ps)).toBe(ps);
  });

  it('drops exact repeats, keeping the first of each in order, the device in either spelling', () => {
    const deviceID = { ...a, deviceId: undefined, deviceID: 'd1' } as ApiParticipant;
    expect(distinctParticipants([a, b, { ...a }, b, deviceID])).toEqual([a, b]);
    expect(distinctParticipants([a, a])).toEqual([a]);
  });

  it('the same over 16 entries (compared by key text)', () => {
    const many = Array.from({ length: 20 }, (_, i) => entry(`u${i}`, 'd', 100, 1));
    expect(distinctParticipants(many)).toBe(many);
    expect(distinctParticipants([...many, { ...many[3]! }, { ...many[19]! }])).toEqual(many);
  });

  it('null and absent times differ (as the list side tells them apart)', () => {
    const absent = { ...a, leftAt: undefined } as ApiParticipant;
    const nul = { ...a, leftAt: null } as ApiParticipant;
    expect(distinctParticipants([absent, nul])).toHaveLength(2);
  });
});

describe('sessionStatedTwice: one user and device joining at one moment, stated with other leave times or minutes', () => {
  const a = entry('u1', 'd1', 100, 1);
  it('names the session; exact repeats, rejoins and other devices are not it', () => {
    expect(sessionStatedTwice([a, { ...a, totalDuration: 1.0001 } as ApiParticipant])).toMatch(/participant "u1" on device "d1", joined at 100, is stated twice/);
    expect(sessionStatedTwice([a, { ...a, leftAt: undefined } as ApiParticipant])).toBeDefined();
    expect(sessionStatedTwice([a, { ...a }])).toBeUndefined();
    expect(sessionStatedTwice([a, entry('u1', 'd1', 160, 1), entry('u1', 'd2', 100, 1), entry('u2', 'd1', 100, 1)])).toBeUndefined();
    expect(sessionStatedTwice([{ ...a, joinedAt: null }, { ...a, joinedAt: null, totalDuration: 2 }] as ApiParticipant[])).toBeUndefined();
  });

  it('the same over 64 entries', () => {
    const many = Array.from({ length: 70 }, (_, i) => entry(`u${i}`, 'd', 100, 1));
    expect(sessionStatedTwice(many)).toBeUndefined();
    expect(sessionStatedTwice([...many, { ...many[40]!, totalDuration: 3 } as ApiParticipant])).toMatch(/"u40"/);
  });
});
