import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * Listings that lost calls in a way the distinct count could not see, found by probing the sync
 * with hostile fakes (2026-11-26); before the fix every run below said 'ok' with calls missing.
 * - Calls removed all through the listing, with an honest `total` that falls each time: past three
 *   step-backs the sync paged forward, and the removed calls (already counted) made the distinct
 *   count reach the fallen total while later calls had moved up past the pages read. Now the pages
 *   are read again in place, and every call still on the service is listed. (Removals before
 *   every single request, re-reads included, can still move a call past them unseen: a known gap,
 *   in the closing note of 2026-11-26; a total that is merely wrong looks the same from here.)
 * - No `total`, only `total_pages`: a page that came back short, then an empty one, ended the
 *   listing though total_pages said more follow (a server hiding rows after paging them): it cannot
 *   be got right from the pages alone, so it must end loudly (partial, one line). Pages counted from
 *   0 with current_page = page + 1 made the sync skip the second page; since page 0's claim to be
 *   page 1 is checked against page 1 (probe round 9, F4), such a listing is read whole, ok.
 * - Pagination at the top level in camelCase was not read at all: no total, so removals lost calls.
 * - Oldest first, the oldest call removed and a new one added before every page (rolling
 *   retention): `total` stays level, each page boundary skips a call, and the removed calls fill
 *   the count. The first page, read again after the listing, shows calls moved up onto it: a second
 *   pass, which must be clean on its own (its first page read again shows nothing moved); else partial.
 * - No `total`, calls of equal start times split across a page boundary, ties ordered differently
 *   on alternate requests: 10 of 300 lost. A tie at a boundary now makes the sync read a second pass.
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;

const LOUD: { name: string; fake: FakeOptions; error: RegExp }[] = [
  { name: 'no total; a short page then an empty one, total_pages says more follow', fake: { total: 'absent', gapAt: 3 }, error: /reported 6 pages and no total, but its pages ended after 3/ },
  { name: 'no total, top-level camelCase pagination; a short page then an empty one', fake: { total: 'absent', gapAt: 3, meta: 'top-camel' }, error: /reported 6 pages and no total, but its pages ended after 3/ },
  { name: 'no total; every page after the first served 7 rows short, offsets stepping by the page size', fake: { total: 'absent', hideRows: 7 }, error: /served a page of 43 calls before pages of 50 and reports no total/ },
];

const tmp = tempDir('callsync-churn-');
afterAll(() => tmp.cleanup());

async function syncOnce(index: number, fake: FakeOptions) {
  const service = await FakeCallsService.start({ seed: 2000 + index, calls: 300, ongoing: 0, ...fake });
  try {
    const database = join(tmp.dir, `case-${index}.db`);
    const summary = await syncWith(settingsAt(service.baseUrls('app1'), database, SETTINGS));
    const stored = await withStore(database, async ({ db }) => new Set((await db.selectFrom('calls').select('session_id').execute()).map((x) => x.session_id)));
    const missing = service.calls.filter((t) => !stored.has(t.sessionId)).map((t) => t.sessionId);
    return { summary, result: summary.results[0]!, missing };
  } finally {
    await service.close();
  }
}

describe('listings whose distinct count hid a loss', () => {
  // Probe round 17 (c), a randomized search: each of these ended ok with calls missing.
  it('one call removed before the last (short) page is read (the total falls once): read again, every call still there stored, ok', async () => {
    const { result, missing } = await syncOnce(20, { calls: 62, deleteWhileListing: 1 });
    expect(missing).toEqual([]);
    expect(result.status, result.error).toBe('ok');
  });

  it('a server ignoring page with a total below what it listed (49 beside 50), total_pages honest: failed naming the repeat, not an ok of 50', async () => {
    const { result, missing } = await syncOnce(21, { calls: 120, ignorePage: true, total: 49 });
    expect(missing.length).toBeGreaterThan(0);
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/page 2 repeats the previous page exactly before the reported end/);
  });

  it('overlapping pages and a total far below what was listed: partial naming the overlap, not ok', async () => {
    const { result, missing } = await syncOnce(22, { calls: 120, overlapAt: 1, total: 10 });
    expect(missing.length).toBeGreaterThan(0);
    expect(result.status).toBe('partial');
    expect(result.error).toMatch(/began with the entry the page before it ended with and reports a total \(10\) below the \d+ calls it listed/);
  });

  it('a server ignoring page, one entry of the page without a sessionId: the repeat is seen, the listing ends at once, not at maxPagesPerRun', async () => {
    const { result } = await syncOnce(24, { calls: 120, ignorePage: true, malformedAfterNewest: true });
    expect(result.status).not.toBe('ok');
    expect(result.requestsByKind.list ?? 0).toBeLessThan(20);
  });

  it('rows hidden after paging with total 0 beside the entries and honest total_pages: partial naming the pages, not ok', async () => {
    const { result, missing } = await syncOnce(23, { calls: 150, gapAt: 2, total: 0 });
    expect(missing.length).toBeGreaterThan(0);
    expect(result.status).toBe('partial');
    expect(result.error).toMatch(/reported \d+ pages and no total, but its pages ended after/);
  });

  it('eight calls removed while the listing is read (total honest, falling each time): ok, and every call still there is stored', async () => {
    const { result, missing } = await syncOnce(0, { deleteWhileListing: 8 });
    // Calls removed from the service stay stored (a sync does not delete; `verify` lists them).
    expect(missing).toEqual([]);
    expect(result.status).toBe('ok');
  });

  it('pagination at the top level in camelCase (totalPages, currentPage), eight removals while listing: the total is read, ok, none missing', async () => {
    const { result, missing } = await syncOnce(10, { meta: 'top-camel', deleteWhileListing: 8 });
    expect(result.reportedTotal).toBe(292);
    expect(missing).toEqual([]);
    expect(result.status).toBe('ok');
  });

  it('oldest first, a retention job deleting the oldest call and a new one arriving before every page (total level): partial, naming the moved calls', async () => {
    const { result, missing } = await syncOnce(11, { order: 'oldest', retainWhileListing: 1000 });
    // Every page boundary skipped a call while the removed ones (already counted) filled the total.
    expect(missing.length).toBeGreaterThan(0);
    expect(result.status).toBe('partial');
    expect(result.error).toMatch(/^[^\n]+$/);
    expect(result.error).toMatch(/moved calls up onto its first page while it was read a second time/);
  });

  it('oldest first, the same retention during the first pass only: the second pass lists every call, ok', async () => {
    const { result, missing } = await syncOnce(12, { order: 'oldest', retainWhileListing: 6 });
    expect(result.listingComplete).toBe(true);
    expect(missing).toEqual([]);
    expect(result.status).toBe('ok');
  });

  // Probe round 12 (F5): the cap began just as page 1 was read again to confirm the listing, and the
  // shorter page hid the calls that moved up onto it: 5–6 calls missing, ok.
  it.each([7, 10])('oldest first, the same retention, pages capped at 30 (offsets by perPage) from List request %i on: none missing, or loud', async (after) => {
    const { result, missing } = await syncOnce(20 + after, { order: 'oldest', retainWhileListing: 6, cap: 30, capAfterRequests: after, offsetByRequested: true });
    if (result.status === 'ok') expect(missing).toEqual([]);
    else expect(result.error).toMatch(/^[^\n]+$/);
  });

  it('no total; tied start times across a page boundary, ordered differently on alternate requests: exact and ok, or loud', async () => {
    const { result, missing } = await syncOnce(9, { total: 'absent', tiedBlock: { at: 40, size: 20 } });
    if (result.status === 'ok') expect(missing).toEqual([]);
    else expect(result.error).toMatch(/^[^\n]+$/);
  });

  it('no total; calls arriving while the listing is read (each repeats a call across a page boundary): the second pass does not count the arrivals as missed, ok, none missing', async () => {
    const { result, missing } = await syncOnce(13, { total: 'absent', retainWhileListing: 4 });
    expect(result.status, result.error).toBe('ok');
    expect(missing).toEqual([]);
  });

  it('no total; pages from 0 with current_page = page + 1: page 0 is not taken for page 1 (they differ), ok, none missing', async () => {
    const { result, missing } = await syncOnce(4, { total: 'absent', pageBase: 0, currentPage: 'plusOne' });
    expect(result.status, result.error).toBe('ok');
    expect(missing).toEqual([]);
  });

  // Probe round 9 (F4): believed to be page 1, page 0's answer (the last 50 calls) was read and
  // page 1 never asked: the newest calls were missing on every run, ok.
  it('no total; page 0 answers the last page saying current_page 1 (a negative offset): page 1 is asked too, ok, none missing', async () => {
    const { result, missing } = await syncOnce(14, { total: 'absent', pageZeroLast: true });
    expect(result.status, result.error).toBe('ok');
    expect(missing).toEqual([]);
  });

  LOUD.forEach((c, i) => {
    it(`${c.name}: partial, one line, and calls really are missing`, async () => {
      const { summary, result, missing } = await syncOnce(i + 1, c.fake);
      expect(missing.length).toBeGreaterThan(0);
      expect(result.status).toBe('partial');
      expect(summary.ok).toBe(false);
      expect(result.error).toMatch(/^[^\n]+$/);
      expect(result.error).toMatch(c.error);
    });
  });
});
