import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTimer, parseTimer } from '../../src/transform/duration.js';

/** Properties of the HH:MM:SS timer (api-seed.md §2.4 `totalDuration`) and its minutes. */
const TIMER = /^\d{2,}:[0-5]\d:[0-5]\d$/;
const pad = (n: number): string => String(n).padStart(2, '0');

describe('HH:MM:SS timers round-trip', () => {
  it('whole seconds → timer → the same seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (s) => {
        const t = formatTimer(s);
        expect(t).toMatch(TIMER);
        expect(parseTimer(t)).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });

  it('minutes as the API gives them (seconds / 60) → timer → the same whole seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 365 * 86_400 }), (s) => {
        const minutes = s / 60;
        expect(parseTimer(formatTimer(minutes * 60))).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });

  it('a canonical timer → seconds → the same text; MM:SS and unpadded fields parse to the same seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), (h, m, s) => {
        const text = `${pad(h)}:${pad(m)}:${pad(s)}`;
        const seconds = h * 3600 + m * 60 + s;
        expect(parseTimer(text)).toBe(seconds);
        expect(formatTimer(seconds)).toBe(text);
        expect(parseTimer(`${h}:${m}:${s}`)).toBe(seconds);
        if (h === 0) expect(parseTimer(`${pad(m)}:${pad(s)}`)).toBe(seconds);
      }),
      { numRuns: 2000 },
    );
  });

  it('parseTimer never throws: null, or whole non-negative seconds', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.stringMatching(/^-?\d{0,25}:\d{0,3}:\d{0,3}(\.\d*)?$/)), (text) => {
        const s = parseTimer(text);
        if (s !== null) {
          expect(Number.isSafeInteger(s)).toBe(true);
          expect(s).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 3000 },
    );
    expect(parseTimer('99999999999999999999:00:00')).toBeNull();
  });

  it('formatTimer never throws: null (negative, NaN, infinite, beyond exact seconds) or a timer', () => {
    fc.assert(
      fc.property(fc.double(), (x) => {
        const t = formatTimer(x);
        if (t !== null) {
          expect(t).toMatch(TIMER);
          expect(parseTimer(t)).toBe(Math.round(x) + 0); // + 0: -0 formats as 00:00:00
        } else expect(!(x >= 0) || !Number.isFinite(x) || Math.round(x) > Number.MAX_SAFE_INTEGER).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
