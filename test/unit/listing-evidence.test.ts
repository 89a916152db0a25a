import { describe, expect, it } from 'vitest';
import { DistinctIds, ListingEnd, OrderObserver, type EntryTimes } from '../../src/source/listing-evidence.js';
import { CallListing } from '../../src/source/paginate-calls.js';
import type { ListCallsPage } from '../../src/source/calls-api.js';

const at = (startedAt: number | null, endedAt: number | null = null): EntryTimes => ({ startedAt, initiatedAt: null, endedAt });

describe('OrderObserver', () => {
  it('sees newest first, oldest first, unordered and unknown', () => {
    const newest = new OrderObserver();
    newest.observe([at(30), at(20), at(20)], false);
    newest.observe([at(10)], true);
    expect(newest.order).toBe('newest-first');

    const oldest = new OrderObserver();
    oldest.observe([at(1), at(2)], false);
    expect(oldest.order).toBe('oldest-first');

    const mixed = new OrderObserver();
    mixed.observe([at(1), at(3), at(2)], false);
    expect(mixed.order).toBe('unordered');

    const none = new OrderObserver();
    none.observe([at(null), at(5), at(5)], false);
    expect(none.order).toBe('unknown');
  });

  it('compares across pages only when the page follows the previous one', () => {
    const o = new OrderObserver();
    o.observe([at(30), at(20)], false);
    o.observe([at(40), at(35)], false); // re-read after stepping back: not a step up
    expect(o.order).toBe('newest-first');
    o.observe([at(50)], true); // follows: 35 → 50 is a step up
    expect(o.order).toBe('unordered');
  });

  it('finds the field the listing is sorted by when start times are out of order', () => {
    const o = new OrderObserver();
    // Sorted by end time: a long call that just ended sits on top with an old start.
    o.observe([at(100, 500), at(400, 450), at(300, 350)], false);
    expect(o.sortedBy).toEqual({ key: 'endedAt', order: 'newest-first' });
  });
});

describe('DistinctIds', () => {
  it('counts distinct ids exactly through growth', () => {
    const d = new DistinctIds();
    for (let i = 0; i < 50_000; i++) d.add(`v1.us.app.${i}`);
    for (let i = 0; i < 50_000; i += 7) expect(d.add(`v1.us.app.${i}`)).toBe(false);
    expect(d.count).toBe(50_000);
  });
});

describe('ListingEnd', () => {
  it('never ends on a full page, even at total_pages', () => {
    const e = new ListingEnd(100);
    expect(e.afterPage({ index: 0, count: 100, meta: { total: 100, totalPages: 1 }, repeatsPrevious: false }, 100).kind).toBe('next');
  });
  it('ends on a short page only when the figures agree, and never on the first', () => {
    const e = new ListingEnd(100);
    expect(e.afterPage({ index: 0, count: 100, meta: { total: 150, totalPages: 2 }, repeatsPrevious: false }, 100).kind).toBe('next');
    expect(e.afterPage({ index: 1, count: 50, meta: { total: 150, totalPages: 2 }, repeatsPrevious: false }, 150).kind).toBe('end');
    const lying = new ListingEnd(100);
    lying.afterPage({ index: 0, count: 100, meta: { total: 950, totalPages: 1 }, repeatsPrevious: false }, 100);
    expect(lying.afterPage({ index: 1, count: 40, meta: { total: 950, totalPages: 1 }, repeatsPrevious: false }, 140).kind).toBe('next');
    const single = new ListingEnd(100);
    expect(single.afterPage({ index: 0, count: 2, meta: { total: 2, totalPages: 1 }, repeatsPrevious: false }, 2).kind).toBe('next');
  });
  it('ends on a short first page only when another listing of the run was served a larger page and proved such figures whole, and a total agrees', () => {
    const page = (count: number, meta: { total?: number; totalPages?: number }) => ({ index: 0, count, meta, repeatsPrevious: false });
    const both = { total: true, pages: true };
    expect(new ListingEnd(1000, 'm', 'members', 500, both).afterPage(page(20, { total: 20, totalPages: 1 }), 20).kind).toBe('end');
    expect(new ListingEnd(1000, 'm', 'members', 500, { total: true, pages: false }).afterPage(page(20, { total: 20 }), 20).kind).toBe('end');
    // No larger page seen, or one only as large: the server may cap pages at this size.
    expect(new ListingEnd(1000, 'm', 'members', 0, both).afterPage(page(20, { total: 20, totalPages: 1 }), 20).kind).toBe('next');
    expect(new ListingEnd(1000, 'm', 'members', 20, both).afterPage(page(20, { total: 20, totalPages: 1 }), 20).kind).toBe('next');
    // A page count alone, proved or not: servers compute it from the perPage asked.
    expect(new ListingEnd(1000, 'm', 'members', 500, both).afterPage(page(20, { totalPages: 1 }), 20).kind).toBe('next');
    // A figure of a kind no listing proved whole: it may count the page alone.
    expect(new ListingEnd(1000, 'm', 'members', 500).afterPage(page(20, { total: 20, totalPages: 1 }), 20).kind).toBe('next');
    expect(new ListingEnd(1000, 'm', 'members', 500, { total: true, pages: false }).afterPage(page(20, { total: 20, totalPages: 1 }), 20).kind).toBe('next');
    expect(new ListingEnd(1000, 'm', 'members', 500, { total: false, pages: true }).afterPage(page(20, { total: 20, totalPages: 1 }), 20).kind).toBe('next');
    // Figures that say more follow, none at all, or a total below what the page lists.
    expect(new ListingEnd(1000, 'm', 'members', 500, both).afterPage(page(20, { total: 48, totalPages: 1 }), 20).kind).toBe('next');
    expect(new ListingEnd(1000, 'm', 'members', 500, both).afterPage(page(20, { totalPages: 5 }), 20).kind).toBe('next');
    expect(new ListingEnd(1000, 'm', 'members', 500, both).afterPage(page(20, {}), 20).kind).toBe('next');
    expect(new ListingEnd(1000, 'm', 'members', 500, both).afterPage(page(20, { total: 10 }), 20).kind).toBe('next');
  });
  it('proves a total whole only when it counted more than a page and the listing read that many; a page count only above 1 and read', () => {
    const read = (pages: { count: number; total?: number; totalPages?: number }[]) => {
      const e = new ListingEnd(10);
      let distinct = 0;
      pages.forEach((p, index) => {
        distinct += p.count;
        e.afterPage({ index, count: p.count, meta: { total: p.total, totalPages: p.totalPages }, repeatsPrevious: false }, distinct);
      });
      return e.provedWhole(distinct);
    };
    expect(read([{ count: 10, total: 25, totalPages: 3 }, { count: 10, total: 25, totalPages: 3 }, { count: 5, total: 25, totalPages: 3 }])).toEqual({ total: true, pages: true });
    // Each page's own figures, or a constant that never exceeds a page: nothing proved.
    expect(read([{ count: 10, total: 10, totalPages: 1 }, { count: 10, total: 10, totalPages: 1 }, { count: 5, total: 5, totalPages: 1 }])).toEqual({ total: false, pages: false });
    expect(read([{ count: 8, total: 8, totalPages: 1 }])).toEqual({ total: false, pages: false });
    // A total above the page that the listing never reached proves nothing either.
    expect(read([{ count: 10, total: 40 }, { count: 5, total: 40 }])).toEqual({ total: false, pages: false });
  });
  it('ends on a full page repeated past the reported end only by a figure shown to count more than a page', () => {
    const read = (pages: { count: number; total?: number; totalPages?: number; repeats?: boolean }[], end = new ListingEnd(50)) => {
      let distinct = 0;
      return pages.map((p, index) => {
        if (!p.repeats) distinct += p.count;
        return end.afterPage({ index, count: p.count, meta: { total: p.total, totalPages: p.totalPages }, repeatsPrevious: p.repeats === true }, distinct).kind;
      });
    };
    // Figures describing the answer alone (a server paging by cursor): no end, broken.
    expect(read([{ count: 50, total: 50, totalPages: 1 }, { count: 50, total: 50, totalPages: 1, repeats: true }])).toEqual(['next', 'broken']);
    expect(read([{ count: 50, totalPages: 1 }, { count: 50, totalPages: 1, repeats: true }])).toEqual(['next', 'broken']);
    // A page count above 1 read through, or a total above a page's count reached: the end.
    expect(read([{ count: 50, totalPages: 2 }, { count: 50, totalPages: 2 }, { count: 50, totalPages: 2, repeats: true }])).toEqual(['next', 'next', 'end']);
    expect(read([{ count: 50, total: 100 }, { count: 50, total: 100 }, { count: 50, total: 100, repeats: true }])).toEqual(['next', 'next', 'end']);
    // A short repeated page keeps the rule: the published example's small listing on such a server.
    expect(read([{ count: 20, total: 20, totalPages: 1 }, { count: 20, total: 20, totalPages: 1, repeats: true }])).toEqual(['next', 'end']);
    // Members: a total proved whole on another group counts.
    expect(read([{ count: 50, total: 50 }, { count: 50, total: 50, repeats: true }], new ListingEnd(50, 'm', 'members', 0, { total: true, pages: false }))).toEqual(['next', 'end']);
  });
  it('measures short against what pages carry, not per_page', () => {
    const e = new ListingEnd(1000);
    e.afterPage({ index: 0, count: 100, meta: {}, repeatsPrevious: false }, 100);
    expect(e.afterPage({ index: 1, count: 100, meta: {}, repeatsPrevious: false }, 200).kind).toBe('next');
    expect(e.afterEmpty(2, {}).kind).toBe('recheck-empty');
  });
  it('takes a repeat past the reported end as the end, and one before it as broken', () => {
    const e = new ListingEnd(100);
    e.afterPage({ index: 0, count: 2, meta: { total: 2, totalPages: 1 }, repeatsPrevious: false }, 2);
    expect(e.afterPage({ index: 1, count: 2, meta: { total: 2, totalPages: 1 }, repeatsPrevious: true }, 2).kind).toBe('end');
    const b = new ListingEnd(100);
    b.afterPage({ index: 0, count: 100, meta: {}, repeatsPrevious: false }, 100);
    expect(b.afterPage({ index: 1, count: 100, meta: {}, repeatsPrevious: true }, 100).kind).toBe('broken');
  });
  it('holds the smallest reported total against the distinct count', () => {
    const e = new ListingEnd(10);
    e.afterPage({ index: 0, count: 10, meta: { total: 25 }, repeatsPrevious: false }, 10);
    e.afterPage({ index: 1, count: 10, meta: { total: 23 }, repeatsPrevious: false }, 20);
    expect(e.minTotal).toBe(23);
    expect(e.shortfall(20)).toBe(3);
    expect(e.shortfall(23)).toBe(0);
  });
});

/** An in-memory List Calls of `n` calls (plain data: the service boundary, not our code). */
function service(n: number, opts: { base?: 0 | 1; cap?: number; oldestFirst?: boolean; currentPage?: boolean } = {}) {
  const calls = Array.from({ length: n }, (_, i) => ({ sessionId: `s${i}`, startedAt: 1_000_000 + (opts.oldestFirst ? i : n - i) * 60 }));
  const asked: number[] = [];
  return {
    asked,
    async listCalls(page: number, perPage: number): Promise<ListCallsPage> {
      asked.push(page);
      const size = Math.min(perPage, opts.cap ?? perPage);
      const base = opts.base ?? 1;
      const k = Math.max(page, base) - base;
      const entries = calls.slice(k * size, (k + 1) * size);
      return { entries, pagination: { total: n, count: entries.length, ...(opts.currentPage === false ? {} : { current_page: Math.max(page, base) }), total_pages: Math.ceil(n / size) } };
    },
  };
}

async function readAll(l: CallListing): Promise<string[]> {
  const ids: string[] = [];
  for await (const p of l.pages()) for (const e of p.entries) ids.push((e as { sessionId: string }).sessionId);
  return ids;
}

describe('CallListing', () => {
  it('reads an honest newest-first listing with one request beyond its pages', async () => {
    const s = service(250);
    const l = new CallListing(s, 100);
    expect(new Set(await readAll(l)).size).toBe(250);
    // Page 0 is answered as page 1 (current_page 1), which page 1 is asked to confirm; the first
    // page is read again at the end, to see calls moved up onto it (removals at the head that
    // `total` did not show).
    expect(s.asked).toEqual([0, 1, 2, 3, 1]);
    expect(l.outcome()).toMatchObject({ complete: true, order: 'newest-first', distinct: 250, reportedTotal: 250, pageBase: 1 });
  });
  it('detects pages numbered from 0', async () => {
    const s = service(250, { base: 0 });
    const l = new CallListing(s, 100);
    expect(new Set(await readAll(l)).size).toBe(250);
    expect(l.outcome()).toMatchObject({ complete: true, pageBase: 0 });
  });
  it('detects pages numbered from 0 without current_page', async () => {
    const s = service(250, { base: 0, currentPage: false });
    const l = new CallListing(s, 100);
    expect(new Set(await readAll(l)).size).toBe(250);
    expect(l.outcome()).toMatchObject({ complete: true, pageBase: 0 });
  });
  it('reads past a cap below the page size asked', async () => {
    const s = service(250, { cap: 30 });
    const l = new CallListing(s, 100);
    expect(new Set(await readAll(l)).size).toBe(250);
    expect(l.outcome().complete).toBe(true);
  });
  it('stops at the window only once newest first is observed; oldest first is read from its end back to the window', async () => {
    const newest = service(1000);
    const l = new CallListing(newest, 100, { lowerBound: 1_000_000 + 900 * 60 });
    await readAll(l);
    expect(l.outcome()).toMatchObject({ stoppedEarly: true, complete: false });
    expect(newest.asked.length).toBeLessThan(5);
    // Oldest first: read from the reported end backwards to the window, never stopping at page 1.
    const oldest = service(1050, { oldestFirst: true });
    const o = new CallListing(oldest, 100, { lowerBound: 1_000_000 + 900 * 60 });
    const ids = new Set(await readAll(o));
    for (let i = 900; i < 1050; i++) expect(ids.has(`s${i}`)).toBe(true);
    expect(o.outcome()).toMatchObject({ stoppedEarly: true, order: 'oldest-first' });
    expect(oldest.asked).toEqual([0, 1, 11, 10, 9]); // page 11 is short and at total_pages: the end
    // Without a window everything is read, forwards.
    const all = service(1050, { oldestFirst: true });
    const a = new CallListing(all, 100);
    expect(new Set(await readAll(a)).size).toBe(1050);
    expect(a.outcome()).toMatchObject({ complete: true, order: 'oldest-first' });
  });
});
