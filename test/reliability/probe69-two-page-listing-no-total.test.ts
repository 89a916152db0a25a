import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';

/**
 * A listing of two pages without a `total`. Only a second pass can tell a listing that lost nothing
 * from one that did when there is no total and no order to page by, or calls of equal times split
 * across the page boundary (paginate-calls.ts). The pass's page count left out the pages read while
 * finding how pages are numbered (page 0, page 1), so a two-page listing counted one page and was
 * never read again: a listing shuffled on every request ended ok with 14 to 21 of 75 calls missing,
 * on every seed (probe69).
 */
const CASES: { name: string; fake: FakeOptions }[] = [
  { name: 'an order drawn anew on every request', fake: { calls: 75, order: 'random', total: 'absent' } },
  { name: 'ties across the page boundary, ordered differently on alternate requests', fake: { calls: 80, total: 'absent', tiedBlock: { at: 44, size: 12 } } },
  { name: 'ties across the page boundary, a coin per request', fake: { calls: 80, total: 'absent', tiedBlock: { at: 44, size: 12, ties: 'random' } } },
];

describe('probe69: a two-page listing without a total', () => {
  const tmp = tempDir('callsync-probe69-2pages-');
  afterAll(() => tmp.cleanup());

  for (const c of CASES) {
    it(`${c.name}: exact, or not ok`, async () => {
      for (const seed of [1, 2, 3, 4, 5, 6]) {
        const service = await FakeCallsService.start({ ongoing: 0, seed, ...c.fake });
        try {
          const database = join(tmp.dir, `${c.name.length}-${seed}.db`);
          const r = (await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'always', pageSize: 50, concurrency: 4 }))).results[0]!;
          const wrong = await callsVsTruth(service, database);
          if (r.status === 'ok') expect({ seed, wrong: wrong.slice(0, 3) }).toEqual({ seed, wrong: [] });
          else expect(r.error, `seed ${seed}`).toMatch(/^[^\n]+$/);
        } finally {
          await service.close();
        }
      }
    });
  }

  it('an honest two-page listing without a total still ends ok, exact', async () => {
    const service = await FakeCallsService.start({ ongoing: 0, seed: 9, calls: 75, total: 'absent' });
    try {
      const database = join(tmp.dir, 'honest.db');
      const r = (await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'always', pageSize: 50, concurrency: 4 }))).results[0]!;
      expect(r.status, r.error).toBe('ok');
      expect(await callsVsTruth(service, database)).toEqual([]);
    } finally {
      await service.close();
    }
  });
});
