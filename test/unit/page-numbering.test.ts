import { describe, expect, it } from 'vitest';
import { firstPages, type NumberedPage } from '../../src/source/page-numbering.js';

/** A listing of `ids` in pages of `size`, as a server numbering pages from `base` answers page `n`. */
function server(ids: string[], size: number, base: 0 | 1, zero?: (ids: string[]) => NumberedPage) {
  const asked: number[] = [];
  const list = async (page: number): Promise<NumberedPage> => {
    asked.push(page);
    if (page === 0 && base === 1 && zero) return zero(ids);
    const k = Math.max(0, page - base);
    return { entries: ids.slice(k * size, k * size + size).map((id) => ({ id })), pagination: { current_page: k + base } };
  };
  return { list, asked };
}

const ids = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => `c${from + i}`);
const idsOf = (p: NumberedPage): unknown[] => p.entries.map((e) => (e as { id: string }).id);

describe('firstPages: how a listing numbers its pages, checked', () => {
  it('from 0, saying current_page 0: one request', async () => {
    const s = server(ids(25), 10, 0);
    const f = await firstPages(s.list, 'id');
    expect(f.base).toBe(0);
    expect(s.asked).toEqual([0]);
  });

  it('from 1, page 0 answered as page 1 (current_page 1): page 1 is asked to check it, base 1', async () => {
    const s = server(ids(25), 10, 1);
    const f = await firstPages(s.list, 'id');
    expect(f.base).toBe(1);
    expect(s.asked).toEqual([0, 1]);
    expect(f.pages.map((p) => [p.requested, idsOf(p.res)])).toEqual([[1, ids(10)]]);
  });

  it('from 1, two calls arriving between page 0 and page 1 (page 1 shifted down): still base 1', async () => {
    const all = ids(25, 2);
    const s = server(['new1', 'new0', ...all], 10, 1, () => ({ entries: all.slice(0, 10).map((id) => ({ id })), pagination: { current_page: 1 } }));
    const f = await firstPages(s.list, 'id');
    expect(f.base).toBe(1);
  });

  it('from 1, page 0 answering the last entries while saying current_page 1 (a negative offset): both pages read, base 0', async () => {
    const s = server(ids(25), 10, 1, (all) => ({ entries: all.slice(-10).map((id) => ({ id })), pagination: { current_page: 1 } }));
    const f = await firstPages(s.list, 'id');
    expect(f.base).toBe(0);
    expect(f.pages.map((p) => [p.requested, idsOf(p.res)])).toEqual([[0, ids(10, 15)], [1, ids(10)]]);
  });
});
