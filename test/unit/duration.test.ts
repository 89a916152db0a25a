import { describe, expect, it } from 'vitest';
import { formatTimer, parseTimer } from '../../src/transform/duration.js';

describe('HH:MM:SS timers', () => {
  it('parses timers, including long calls and MM:SS', () => {
    expect(parseTimer('00:00:19')).toBe(19);
    expect(parseTimer('01:02:03')).toBe(3723);
    expect(parseTimer('123:00:00')).toBe(442800);
    expect(parseTimer('05:07')).toBe(307);
  });
  it('returns null for what is not a timer', () => {
    for (const t of ['', 'abc', '1:2:3:4', '00:61:00', null, undefined, '-00:00:01']) expect(parseTimer(t)).toBeNull();
  });
  it('formats and parses back', () => {
    for (const s of [0, 1, 59, 60, 3599, 3600, 86399, 360000]) expect(parseTimer(formatTimer(s))).toBe(s);
    expect(formatTimer(-1)).toBeNull();
  });
});
