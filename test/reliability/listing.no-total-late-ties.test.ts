import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { syncSeed } from './support/listing-seed.js';

/**
 * A newest-first List Calls with neither `total` nor `total_pages`, calls of one start time ordered
 * differently on each request, listed calls removed while its pages are read. A removal above the
 * block shifts it so that the first pass shows its calls on one page (no tie across a boundary, none
 * held); the second pass splits it, one call twice and one skipped, and finds nothing the first
 * missed: ok with a call missing (helper-80, churn model `--mode seen --total absent`: 18 of 2,000
 * newest-first, 20 oldest-first); here 15 of 40 seeds, ok with one missing. A time first split by a
 * later pass is now held as well (with its calls an earlier pass showed at a page's edge): those 15
 * are partial, the other 25 still exact.
 */
describe('no total, ties first split on a later pass, listed calls removed', () => {
  const tmp = tempDir('callsync-no-total-late-ties-');
  afterAll(() => tmp.cleanup());

  it('each seed ends ok and exact, or loud; none ok with a call missing', async () => {
    const branches: Record<string, number> = {};
    for (let seed = 1; seed <= 40; seed++) {
      const pageSize = 7 + (seed % 3) * 3;
      // One call more than a page, from the top of a page: the page takes all but one of them.
      const k = 2 + (seed % 3);
      let removed = false;
      const service = await FakeCallsService.start({
        seed, calls: 60 + (seed % 30), ongoing: 0, total: 'absent', totalPages: 'absent',
        tiedBlock: { at: pageSize * k, size: pageSize + 1, ties: seed % 2 ? 'alternate' : 'random' },
        // Before the page after the block, a listed call near the top is removed: the block's last call moves up onto the page read.
        beforeList: (fake, page) => {
          if (page !== k + 1 || removed) return;
          removed = true;
          const victim = [...fake.calls].sort((a, b) => b.initiatedAt - a.initiatedAt)[2 + (seed % 4)]!;
          fake.calls.splice(fake.calls.indexOf(victim), 1);
        },
      });
      try {
        const branch = await syncSeed(service, join(tmp.dir, `s${seed}.db`), pageSize, `seed ${seed}`, { namesListing: true });
        branches[branch] = (branches[branch] ?? 0) + 1;
      } finally {
        await service.close();
      }
    }
    console.log('no total, late ties:', branches);
    expect(branches['ok-with-missing'] ?? 0).toBe(0);
    expect(branches.exact ?? 0).toBeGreaterThanOrEqual(20);
  });
});
