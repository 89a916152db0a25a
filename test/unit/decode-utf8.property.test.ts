import { describe, expect, it } from 'vitest';
import { bytesAre, decodeUtf8 } from '../../src/source/http-client.js';

/** decodeUtf8 must give what a fatal TextDecoder gives: the same text, or a refusal where it throws. */

const fatal = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');
function reference(bytes: Buffer, strict: boolean): string | undefined {
  try {
    return (strict ? fatal : lenient).decode(bytes);
  } catch {
    return undefined;
  }
}

// Pieces that make valid and invalid UTF-8: BOMs, overlongs, encoded surrogates, truncated and stray bytes.
const PIECES = ['7b', '22', '61', 'efbbbf', 'c3a9', 'e282ac', 'f09f9880', 'c0af', 'e080af', 'eda080', 'edbfbf', 'f4908080', 'c3', 'e282', '80', 'ff', 'fe', '00'];

/** A repeatable stream of integers below `n` (a linear congruential generator from `seed`). */
function randomInts(seed: number): (n: number) => number {
  return (n) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
}

describe('decodeUtf8', () => {
  it('decodes as a fatal TextDecoder does, BOM dropped, and refuses where it throws', () => {
    const rnd = randomInts(3);
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const hex = Array.from({ length: rnd(6) }, () => PIECES[rnd(PIECES.length)]!).join('');
      const bytes = Buffer.from(hex, 'hex');
      for (const strict of [true, false]) {
        const want = reference(bytes, strict);
        expect(decodeUtf8(bytes, strict)).toBe(want);
        if (want === undefined) refused++;
      }
    }
    expect(refused).toBeGreaterThan(1_000);
    expect(decodeUtf8(Buffer.from('efbbbf7b7d', 'hex'), true)).toBe('{}');
  });
});

describe('bytesAre', () => {
  it('is true exactly when the bytes are the UTF-8 of the pieces joined', () => {
    const rnd = randomInts(7);
    const chars = ['a', '"', '{', '}', 'é', '€', '🙂', '\u0000', '\\'];
    const text = (): string => Array.from({ length: rnd(5) }, () => chars[rnd(chars.length)]!).join('');
    let equal = 0;
    for (let i = 0; i < 20_000; i++) {
      const pieces = Array.from({ length: 1 + rnd(3) }, text);
      // Half the time the body is the pieces' own bytes; else another text of like length.
      const body = rnd(2) === 0 ? pieces.join('') : text();
      const bytes = Buffer.from(body, 'utf8');
      const want = Buffer.from(pieces.join(''), 'utf8').equals(bytes);
      if (want) equal++;
      expect(bytesAre(bytes, pieces), JSON.stringify([pieces, body])).toBe(want);
      // Equal bytes with one byte more or less are not.
      if (want && bytes.length > 0) expect(bytesAre(bytes.subarray(0, bytes.length - 1), pieces)).toBe(false);
      if (want) expect(bytesAre(Buffer.concat([bytes, Buffer.from('x')]), pieces)).toBe(false);
    }
    expect(equal).toBeGreaterThan(5_000);
  });
});
