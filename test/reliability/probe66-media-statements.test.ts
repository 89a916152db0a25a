import { describe, expect, it } from 'vitest';
import type { FakeCallsService, Wire } from './support/fake-calls-service.js';
import { nights } from './support/nights.js';

/** Probe 66: media a service leaves unsaid (MediaStatements), servers stating media in other styles. */
const deleteSome = (s: FakeCallsService, night: number): void => {
  if (night !== 1) return;
  s.calls.filter((c) => c.hasRecording).forEach((c, i) => { if (i % 2 === 0) { c.hasRecording = false; delete c.recordings; } });
};

describe('probe66 media statements', () => {
  it('a service stating media by arrays only (never hasRecording): a deleted recording is dropped, ok, not partial every night', async () => {
    const arraysOnly = (w: Wire): Wire => { const o = { ...w }; delete o.hasRecording; if (Array.isArray(o.recordings) && o.recordings.length === 0) delete o.recordings; return o; };
    const ns = await nights('arrays-only', { seed: 661, recordings: { every: 3, listed: 'all' }, getAnswer: arraysOnly, listEntry: arraysOnly }, {
      n: 4, extra: { detailFetch: 'always' }, full: (n) => n >= 2, between: deleteSome,
    });
    const tail = ns.slice(2).map((n) => ({ night: n.night, status: n.status, wrong: n.wrong }));
    expect(tail, JSON.stringify(ns.slice(2).map((n) => [n.error, n.firstWrong]))).toEqual([{ night: 2, status: 'ok', wrong: 0 }, { night: 3, status: 'ok', wrong: 0 }]);
  });

  // get-omitempty is a known gap (session 30): a call asked by id only (settle audit), in a run whose
  // Get Call answers stated no media before it, is judged by the list's `false` (unsaid): its deleted
  // recordings stay, ok. Runs with CALLSYNC_GAPS=1.
  for (const [style, detailFetch] of [['stated', 'always'], ['get-omitempty', 'always'], ['both-omitempty', 'always']] as const) {
    it.runIf(style !== 'get-omitempty' || process.env.CALLSYNC_GAPS === '1')(`${style} (${detailFetch}): recordings deleted of calls older than the window, asked again by the settle audit only: ok means exact`, async () => {
      const omitempty = (w: Wire): Wire => { const o = { ...w }; if (o.hasRecording === false) delete o.hasRecording; return o; };
      // List entries state hasRecording: false; Get Call's answers leave a false one out (one endpoint omitempty).
      const ns = await nights(`mixed-${style}-${detailFetch}`, { seed: 662, recordings: { every: 3, listed: 'all' }, spanHours: 96, ...(style !== 'stated' ? { getAnswer: omitempty } : {}), ...(style === 'both-omitempty' ? { listEntry: omitempty } : {}) }, {
        n: 12, extra: { detailFetch, settleDays: 7 },
        between: (s, night) => {
          if (night !== 1) return;
          const cut = Math.floor(Date.now() / 1000) - 30 * 3600;
          for (const c of s.calls) if (c.hasRecording && c.initiatedAt < cut) { c.hasRecording = false; delete c.recordings; }
        },
      });
      // By the last night the settle audit's random draws have found the change (a service stating
      // false: the finding re-reads the window); ok then means exact. Twelve nights: with five, all
      // four nights' draws missed it now and then (a clean-clone CI, session 31: 68 wrong, ok).
      const last = ns[ns.length - 1]!;
      expect(last.status === 'ok' ? last.wrong : 0, JSON.stringify(ns.map((n) => [n.status, n.wrong, n.firstWrong, n.auditedAgain]))).toBe(0);
    });
  }
});

describe('probe66 media: a Get Call view that never carries media', () => {
  it('entries state media, Get Call answers leave hasRecording and recordings out: stored recordings of calls asked again by id stay, ok and exact', async () => {
    const ns = await nights('get-no-media', { seed: 664, recordings: { every: 3, listed: 'all' }, getOmits: ['hasRecording', 'recordings'], spanHours: 96 }, {
      n: 4, extra: { detailFetch: 'always', settleDays: 7 },
    });
    expect(ns.map((n) => [n.status, n.wrong]), JSON.stringify(ns.map((n) => [n.status, n.wrong, n.firstWrong, n.error?.slice(0, 200)]))).toEqual(ns.map(() => ['ok', 0]));
  });
});
