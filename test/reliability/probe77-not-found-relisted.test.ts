import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe77 F2: Get Call answering ERR_CALL_SESSION_NOT_FOUND once for a listed call (a replica
 * behind the listing) marks it not_found_at. Ended before settleDays, it was never asked again:
 * its entry unchanged, every later listing (full ones, proved complete, too) skipped it, and the
 * call the service lists stayed marked gone for good, ok (the fuzz's seed 7083: 9 nights). README:
 * "a call listed again later is stored again, unmarked". A full listing now asks Get Call again
 * for every listed call stored as not found.
 */
const tmp = tempDir('probe77-nf-relisted-');
afterAll(() => tmp.cleanup());

describe('a listed call Get Call once said does not exist', () => {
  it('is unmarked by the next full listing that shows it, whatever its age', async () => {
    // Oldest first: the call Get Call first denies is the oldest, ended days before settleDays.
    // Entries without the details (listMinimal): one carrying the whole call is stored from it, never marked (probe79).
    const service = await FakeCallsService.start({ seed: 773, calls: 40, ongoing: 0, spanHours: 240, order: 'oldest', notFoundFirst: 1, listMinimal: true });
    try {
      const database = join(tmp.dir, 'nf.db');
      const settings = settingsAt(service.baseUrls('app1'), database, { detailFetch: 'always' });
      const oldest = [...service.calls].sort((a, b) => a.initiatedAt - b.initiatedAt)[0]!;
      expect(oldest.initiatedAt).toBeLessThan(Date.now() / 1000 - 4 * 86_400);
      const first = (await syncWith(settings)).results[0]!;
      // Older than settleDays and denied: taken as removed, the listing still showing it (README).
      expect(first.status, first.error).toBe('ok');
      const mark = () => withStore(database, async ({ db }) => (await db.selectFrom('calls').select('not_found_at').where('session_id', '=', oldest.sessionId).executeTakeFirstOrThrow()).not_found_at);
      expect(await mark()).not.toBeNull(); // as documented: Get Call said so
      const full = (await syncWith(settings, { full: true })).results[0]!;
      expect(full).toMatchObject({ mode: 'full', status: 'ok' });
      expect(await mark()).toBeNull();
    } finally {
      await service.close();
    }
  });
});
