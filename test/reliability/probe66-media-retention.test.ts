import { describe, expect, it } from 'vitest';
import type { Wire } from './support/fake-calls-service.js';
import { nights } from './support/nights.js';

/**
 * probe66 (a guard: holds at af26586, failed with a first version of the F2 fix that judged a call
 * asked by id by Get Call's statements alone): an omitempty service (hasRecording left out when false) with a recordings retention
 * (recordings deleted on calls older than 3 days), whose recent calls (the incremental window)
 * carry no recordings: the runs' statements never state media, so every stored call whose recording
 * retention removed reads as a doubt: partial, night after night, on a service that is consistent.
 */
describe('probe66 omitempty and retention', () => {
  for (const style of ['omitempty'] as const) it(`${style}: recordings removed by retention: not partial every night`, async () => {
    const omitempty = (w: Wire): Wire => { const o = { ...w }; if (style === 'omitempty' && o.hasRecording === false) delete o.hasRecording; return o; };
    const now = (): number => Math.floor(Date.now() / 1000);
    const ns = await nights(`retention-${style}`, { seed: 653, recordings: { every: 3, listed: 'all' }, getAnswer: omitempty, listEntry: omitempty }, {
      n: 7, extra: { settleDays: 7 },
      setup: (s) => { for (const c of s.calls) if (c.hasRecording && c.initiatedAt > now() - 30 * 3600) { c.hasRecording = false; delete c.recordings; } },
      between: (s) => { const cut = now() - 3 * 86400; for (const c of s.calls) if (c.hasRecording && c.initiatedAt < cut) { c.hasRecording = false; delete c.recordings; } },
    });
    const show = JSON.stringify(ns.map((n) => [n.night, n.status, n.wrong, n.retries, n.error?.slice(0, 200)]));
    expect(ns.slice(3).map((n) => n.status), show).not.toEqual(ns.slice(3).map(() => 'partial'));
    // (Deleted recordings of old calls stored from their list entries stay until `sync --full`, as with a service stating `false`.)
  });
});
