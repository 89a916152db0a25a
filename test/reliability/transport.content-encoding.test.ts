import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestSim, syncWith, tempDir, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';
import { settingsAt } from './support/matrix.js';
import { relay, startProxy, viaProxy } from './support/servers.js';

/**
 * callsync sends no Accept-Encoding, and a request without one lets the server answer in any
 * content coding (RFC 9110, 12.5.3). Hostile-fake probe round 8: a server compressing every answer
 * made every request fail as "a body that is not valid UTF-8", so no sync could ever finish. The
 * codings Node decodes are undone; one it cannot is named in the run's error.
 */
const CALLS = 150;
const SETTINGS = { detailFetch: 'always', concurrency: 4, maxAttempts: 3, pageSize: 50 } as const;
const tmp = tempDir('callsync-coding-');
afterAll(() => tmp.cleanup());

/** Each coding a server may pick, as Content-Encoding names it, and how it makes the bytes. */
const CODINGS: [header: string, encode: (b: Buffer) => Buffer][] = [
  ['gzip', (b) => gzipSync(b)],
  ['br', (b) => brotliCompressSync(b)],
  ['deflate', (b) => deflateSync(b)],
  ['deflate', (b) => deflateRawSync(b)], // "deflate" sent raw, as some servers do
  ['x-gzip', (b) => gzipSync(b)],
  ['identity, gzip', (b) => gzipSync(b)],
  ['gzip, br', (b) => brotliCompressSync(gzipSync(b))], // two codings, applied in the order named
];

describe('answers in a content coding nobody asked for', () => {
  it('every coding Node decodes (gzip, br, deflate zlib or raw, stacked): the sync ends ok, equal to the truth', async () => {
    const sim = await startTestSim([{ calls: CALLS }]);
    const used = new Map<string, number>();
    let n = 0;
    const proxy = await startProxy(sim.url, async (_req, pass) => {
      const up = await pass();
      const [header, encode] = CODINGS[n++ % CODINGS.length]!;
      used.set(header, (used.get(header) ?? 0) + 1);
      return { ...relay(up, encode(up.body)), headers: { ...relay(up).headers, 'content-encoding': header } };
    });
    try {
      const db = join(tmp.dir, 'decoded.db');
      const r = (await syncWith(settingsAt(viaProxy(proxy.url, 'app1'), db, SETTINGS))).results[0]!;
      expect(r.status, r.error).toBe('ok');
      expect(r.retries).toBe(0);
      // Every coding answered List Calls or Get Call (and the members and usage requests) several times.
      for (const [header] of CODINGS) expect(used.get(header), header).toBeGreaterThan(3);
      await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('a coding it cannot decode: the run fails on the first page and names the coding, nothing stored', async () => {
    const sim = await startTestSim([{ calls: CALLS }]);
    const proxy = await startProxy(sim.url, async (_req, pass) => {
      const up = await pass();
      return { ...relay(up, gzipSync(up.body)), headers: { ...relay(up).headers, 'content-encoding': 'zstd' } };
    });
    try {
      const db = join(tmp.dir, 'zstd.db');
      const r = (await syncWith(settingsAt(viaProxy(proxy.url, 'app1'), db, SETTINGS))).results[0]!;
      expect(r.status).toBe('failed');
      expect(r.error).toMatch(/List Calls .*failed: HTTP body in Content-Encoding "zstd", which callsync cannot decode/);
      // Not retried: the same request gets the same coding.
      expect(r.retries).toBe(0);
      await withStore(db, async (s) => expect(await s.db.selectFrom('calls').select('session_id').execute()).toEqual([]));
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('an error in a coding it cannot decode: its status decides (a 503 is retried), the sync ends ok', async () => {
    const sim = await startTestSim([{ calls: CALLS }]);
    let n = 0;
    const refused = new Set<string>();
    const proxy = await startProxy(sim.url, async (req, pass) => {
      // Every fourth request path, on its first attempt only.
      if (!refused.has(req.url) && ++n % 4 === 0) {
        refused.add(req.url);
        return { status: 503, headers: { 'content-encoding': 'zstd' }, body: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0x58]) };
      }
      return pass();
    });
    try {
      const db = join(tmp.dir, 'zstd-503.db');
      const r = (await syncWith(settingsAt(viaProxy(proxy.url, 'app1'), db, { ...SETTINGS, maxAttempts: 6 }))).results[0]!;
      expect(r.status, r.error).toBe('ok');
      expect(r.retries).toBeGreaterThan(10);
      await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
    } finally {
      await proxy.close();
      await sim.close();
    }
  });
});
