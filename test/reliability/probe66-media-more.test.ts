import { describe, expect, it } from 'vitest';
import type { FakeCall, FakeCallsService, Wire } from './support/fake-calls-service.js';
import { nights, type Night } from './support/nights.js';

const omitFalse = (k: string) => (w: Wire): Wire => { const o = { ...w }; if (o[k] === false) delete o[k]; return o; };
const both = (w: Wire): Wire => omitFalse('hasTranscription')(omitFalse('hasRecording')(w));
const show = (ns: Night[]): string => JSON.stringify(ns.map((n) => [n.night, n.status, n.wrong, n.firstWrong, n.error?.slice(0, 160)]));
const transcribe = (c: FakeCall, k: number): void => {
  c.hasTranscription = true;
  c.transcriptions = Array.from({ length: k }, (_, i) => ({ tid: `${c.sessionId}-t${i}`, startTime: c.startedAt, endTime: c.endedAt, transcriptUrl: `https://tr.invalid/${c.sessionId}/${i}.txt` }));
};
const ended = (s: FakeCallsService): FakeCall[] => s.calls.filter((c) => c.status === 'ended' && c.startedAt !== undefined);

describe('probe66 media, more styles', () => {
  it('transcriptions only (hasTranscription omitted when false), some deleted: full sync exact and ok', async () => {
    const ns = await nights('tr-only', { seed: 671, getAnswer: both, listEntry: both }, {
      n: 3, full: (n) => n >= 2,
      setup: (s) => ended(s).forEach((c, i) => { if (i % 4 === 0) transcribe(c, 2); else c.hasTranscription = false; }),
      between: (s, night) => { if (night === 1) ended(s).filter((c) => c.hasTranscription).forEach((c, i) => { if (i % 2 === 0) { c.hasTranscription = false; delete c.transcriptions; } }); },
    });
    expect(ns.slice(2).map((n) => [n.status, n.wrong]), show(ns)).toEqual([['ok', 0]]);
  });
  it('omitempty, recordings added later to ended calls and live calls ending with recordings: exact, ok', async () => {
    const ns = await nights('added-later', { seed: 672, ongoing: 3, recordings: { every: 4, listed: 'all' }, getAnswer: both, listEntry: both }, {
      n: 3, extra: { lookbackHours: 24 },
      between: (s, night) => {
        if (night !== 1) return;
        s.endOngoing();
        const now = Math.floor(Date.now() / 1000);
        for (const c of ended(s).filter((x) => !x.hasRecording && x.initiatedAt > now - 12 * 3600).slice(0, 6).concat(s.calls.filter((x) => x.initiatedAt > now - 400 && x.status === 'ended'))) {
          c.hasRecording = true;
          c.recordings = [{ rid: `${c.sessionId}-late`, recording_url: `https://rec.invalid/${c.sessionId}/late.mp4`, startTime: c.startedAt, endTime: c.endedAt, duration: (c.endedAt! - c.startedAt!) / 60 }];
        }
      },
    });
    expect(ns.map((n) => (n.status === 'ok' ? n.recentWrong : 0)), show(ns)).toEqual([0, 0, 0]);
  });
  it('the SDK recordingUrl style with omitempty: a deleted recording is dropped by --full, ok and exact', async () => {
    const sdk = (w: Wire): Wire => { const o = both(w); if (Array.isArray(o.recordings) && o.recordings.length) o.recordingUrl = (o.recordings as Wire[])[0]!.recording_url; delete o.recordings; return o; };
    const ns = await nights('sdk-omit', { seed: 673, recordings: { every: 3, listed: 'all' }, getAnswer: sdk, listEntry: sdk }, {
      n: 3, extra: { detailFetch: 'always' }, full: (n) => n >= 2,
      setup: (s) => { for (const c of s.calls) if (Array.isArray(c.recordings)) c.recordings = c.recordings.slice(0, 1); },
      between: (s, night) => { if (night === 1) s.calls.filter((c) => c.hasRecording).forEach((c, i) => { if (i % 2 === 0) { c.hasRecording = false; delete c.recordings; } }); },
    });
    expect(ns.slice(2).map((n) => [n.status, n.wrong]), show(ns)).toEqual([['ok', 0]]);
  });
});
