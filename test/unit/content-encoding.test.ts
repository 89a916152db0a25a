import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeContentEncoding } from '../../src/source/content-encoding.js';

describe('decodeContentEncoding', () => {
  const text = Buffer.from(JSON.stringify({ data: [{ sessionId: 'v1.us.a' }] }));

  it('leaves a body without a coding, or in identity, as it came (the same buffer)', () => {
    for (const header of [undefined, 'identity', ' Identity ', '']) expect(decodeContentEncoding(header, text, 1_000)).toEqual({ bytes: text });
  });

  it('stops at maxBytes decoded: a small gzip body that inflates past the cap is refused, not retried', () => {
    const bomb = gzipSync(Buffer.alloc(5_000_000, 32));
    expect(bomb.length).toBeLessThan(10_000);
    const r = decodeContentEncoding('gzip', bomb, 100_000);
    expect(r).toMatchObject({ retry: false });
    expect('problem' in r && r.problem).toMatch(/larger than maxResponseBytes \(100000 bytes\) once its gzip coding is undone/);
  });

  it('garbled compressed bytes are retried; a coding named like an Object property is unknown, not called', () => {
    expect(decodeContentEncoding('gzip', Buffer.from('not gzip at all'), 1_000)).toMatchObject({ retry: true });
    for (const header of ['constructor', '__proto__', 'toString']) {
      expect(decodeContentEncoding(header, text, 1_000)).toMatchObject({ retry: false, problem: expect.stringContaining('cannot decode') as unknown });
    }
  });
});
