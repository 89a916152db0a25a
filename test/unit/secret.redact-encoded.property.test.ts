import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact, Secret } from '../../src/config/secret.js';

/**
 * redact masks a key echoed base64- or base64url-encoded inside a longer encoded text, wherever it
 * starts in it: what is left of the echo holds no run of characters that the key's bytes alone
 * decide (one byte spared at each end, as the encoding mixes them with their neighbours).
 */
const keyChars = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-'.split(''));
const key = fc.array(keyChars, { minLength: 12, maxLength: 48 }).map((cs) => cs.join(''));
const bytes = fc.uint8Array({ maxLength: 7 });

describe('redact: encoded echoes of a key', () => {
  it('masks the key-decided middle of any base64 or base64url echo', () => {
    fc.assert(
      fc.property(key, bytes, bytes, fc.constantFrom('base64' as const, 'base64url' as const), (k, before, after, encoding) => {
        const echoed = Buffer.concat([before, Buffer.from(k), after]).toString(encoding);
        const from = Math.ceil((8 * (before.length + 1)) / 6);
        const to = Math.floor((8 * (before.length + k.length - 1)) / 6);
        const middle = echoed.slice(from, to);
        const out = redact(`refused: ${echoed}.`, [new Secret(k)]);
        expect(out).toContain('***');
        expect(out).not.toContain(middle);
        expect(out).not.toContain(k);
      }),
      { numRuns: 500 },
    );
  });

  it('leaves text without the key as it is', () => {
    fc.assert(
      fc.property(key, fc.string({ maxLength: 200 }), (k, text) => {
        fc.pre(!text.includes(k) && !text.includes('***'));
        const other = Buffer.from(`${k}x`).toString('base64').slice(0, 6); // shorter than any form masked
        expect(redact(`${text}${other}`, [new Secret(k)])).toBe(`${text}${other}`);
      }),
      { numRuns: 300 },
    );
  });
});
