import { describe, expect, it } from 'vitest';
import type { ApiParticipant } from '../../src/source/schemas.js';
import { distinctParticipants } from '../../src/transform/participant-entries.js';

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
