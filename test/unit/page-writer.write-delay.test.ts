import { describe, expect, it } from 'vitest';
import { MAX_WRITE_DELAY_MS, MIN_CALLS_PER_TRANSACTION, PageWriter, type PageWrite } from '../../src/sync/page-writer.js';
import type { CallRows } from '../../src/store/schema.js';
import { TestClock } from '../helpers/test-clock.js';

/** A page of `n` writes (calls found gone: the lightest write that still counts). */
function page(tag: string, n = 1): PageWrite {
  return { rows: [], rejects: [], notFoundIds: Array.from({ length: n }, (_, i) => `${tag}-${i}`), retries: [], cleared: [] };
}

// The writer's timing on a test clock: a transaction's contents are what the clock says they are.
describe('the page writer groups pages into transactions by size and delay', () => {
  function writer(clock: TestClock): { w: PageWriter; commits: string[][] } {
    const commits: string[][] = [];
    const w = new PageWriter(async (batch) => {
      commits.push(batch.flatMap((p) => p.notFoundIds));
    }, clock);
    return { w, commits };
  }

  it('a small page waits for MAX_WRITE_DELAY_MS and is written exactly then, with the pages that came meanwhile', async () => {
    const clock = new TestClock();
    const { w, commits } = writer(clock);
    w.add(page('a'));
    await clock.advance(MAX_WRITE_DELAY_MS - 1);
    w.add(page('b'));
    expect(commits).toEqual([]);
    expect(w.queued).toBe(2);
    await clock.advance(1);
    expect(commits).toEqual([['a-0', 'b-0']]);
    expect(w.queued).toBe(0);
    // The next page waits its own delay, counted from its arrival.
    w.add(page('c'));
    await clock.advance(MAX_WRITE_DELAY_MS - 1);
    expect(commits).toHaveLength(1);
    await clock.advance(1);
    expect(commits).toEqual([['a-0', 'b-0'], ['c-0']]);
  });

  it('enough waiting calls are written at once, without the delay, and flush() writes the rest at once', async () => {
    const clock = new TestClock();
    const { w, commits } = writer(clock);
    w.add(page('small', 10));
    w.add(page('big', MIN_CALLS_PER_TRANSACTION));
    await clock.advance(0);
    expect(commits.map((c) => c.length)).toEqual([10 + MIN_CALLS_PER_TRANSACTION]);
    w.add(page('tail'));
    expect(clock.pending).toBe(1);
    await w.flush();
    expect(commits.at(-1)).toEqual(['tail-0']);
    // The delay timer was cancelled: nothing is left to fire.
    expect(clock.pending).toBe(0);
    w.throwIfFailed();
  });

  it('counts a page of fetched calls by its calls, not by the retry-list ids that come with them', async () => {
    const clock = new TestClock();
    const { w, commits } = writer(clock);
    // A page of Get Call answers: each call is a row and clears its id from the retry list. The
    // writer never looks into the rows: empty objects stand for them.
    const n = MIN_CALLS_PER_TRANSACTION / 2;
    const fetched: PageWrite = { rows: Array.from({ length: n }, () => ({}) as CallRows), rejects: [], notFoundIds: [], retries: [], cleared: Array.from({ length: n }, (_, i) => `c-${i}`) };
    w.add(fetched);
    expect(w.queued).toBe(n);
    await clock.advance(0);
    expect(commits).toEqual([]);
    w.add(page('more', n));
    await clock.advance(0);
    expect(commits).toHaveLength(1);
  });
});
