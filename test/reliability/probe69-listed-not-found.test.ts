import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';

/**
 * A Get Call behind the listing answers ERR_CALL_SESSION_NOT_FOUND for the newest calls while List
 * Calls shows them. Their entries carrying the whole call, storing the entry loses nothing (ok, and
 * the next run asks again: sync.get-answers-checked). Entries that carry only the call's id, kind,
 * status and times (no participants, no minutes) were stored just the same and the run said ok:
 * 5 calls without their minutes, participants or initiator on the night they were synced (probe69).
 */
describe('probe69: listed calls Get Call says do not exist, their entries without the details', () => {
  const tmp = tempDir('callsync-probe69-nf-');
  afterAll(() => tmp.cleanup());

  for (const detailFetch of ['auto', 'always'] as const) {
    it(`detailFetch ${detailFetch}: partial, naming them, while the details are missing; the next run stores them whole, ok`, async () => {
      const service = await FakeCallsService.start({ calls: 40, ongoing: 0, seed: 5, listMinimal: true, notFoundFirst: 5 });
      try {
        const database = join(tmp.dir, `${detailFetch}.db`);
        const settings = settingsAt(service.baseUrls('app1'), database, { detailFetch, concurrency: 4 });
        const first = (await syncWith(settings)).results[0]!;
        const wrong = await callsVsTruth(service, database);
        expect(wrong.length).toBeGreaterThan(0);
        // Never ok with calls missing their details.
        expect(first.status).toBe('partial');
        expect(first.error).toMatch(/^[^\n]*5 listed call\(s\) Get Call says do not exist \(ERR_CALL_SESSION_NOT_FOUND\)/);

        const second = (await syncWith(settings)).results[0]!;
        expect(second.status, second.error).toBe('ok');
        expect(await callsVsTruth(service, database)).toEqual([]);
      } finally {
        await service.close();
      }
    });
  }

  it('entries carrying the whole call: the night Get Call lags is ok, each call stored from its entry, not marked gone', async () => {
    const service = await FakeCallsService.start({ calls: 40, ongoing: 0, seed: 5, notFoundFirst: 5 });
    try {
      const database = join(tmp.dir, 'whole.db');
      const first = (await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'always', concurrency: 4 }))).results[0]!;
      expect(first.status, first.error).toBe('ok');
      // The listing shows them whole: not gone (marked, a report filtering on not_found_at lost them for a night; probe77 fuzz).
      expect(first.notFound).toBe(0);
      expect(await withStore(database, ({ db }) => db.selectFrom('calls').select('session_id').where('not_found_at', 'is not', null).execute())).toEqual([]);
      expect(await callsVsTruth(service, database)).toEqual([]);
    } finally {
      await service.close();
    }
  });
});
