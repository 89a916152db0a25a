import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { Settings } from '../../src/config/load.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * Get Call answers that leave out what an earlier answer for the same call had, when the call is
 * asked for again: by the unsettled pass, or because a live call ended (hostile-fake probe round
 * 11, F1). Only the settle audit filled what an answer left out from the stored answer; elsewhere
 * the answer was stored as it came: 19 calls lost their participants, 4 their recordings, 6 ended
 * calls kept no participants at all, every run ok. Now what an answer leaves out comes from the
 * answer the call was last written from, unless that was provisional (the call live, or its
 * participants unfinished): then nothing proves the call's details, the stored rows stay and the
 * run is partial until an answer states them.
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 2, requestTimeoutMs: 2_000 } as const;

const tmp = tempDir('callsync-follow-up-omits-');
afterAll(() => tmp.cleanup());

const without = (keys: readonly string[]) => (a: Wire): Wire => Object.fromEntries(Object.entries(a).filter(([k]) => !keys.includes(k)));

/** Calls whose stored participants (how many, their minutes) or recordings differ from the service's. */
async function off(database: string, service: FakeCallsService): Promise<string[]> {
  const rows = await withStore(database, async ({ db }) => ({
    calls: await db.selectFrom('calls').select(['session_id', 'participant_total_minutes', 'total_audio_minutes', 'total_video_minutes']).execute(),
    participants: await db.selectFrom('call_participants').select('session_id').execute(),
    recordings: await db.selectFrom('call_recordings').select('session_id').execute(),
  }));
  const count = (list: { session_id: string }[]): Map<string, number> => list.reduce((m, r) => m.set(r.session_id, (m.get(r.session_id) ?? 0) + 1), new Map<string, number>());
  const parts = count(rows.participants);
  const recs = count(rows.recordings);
  const stored = new Map(rows.calls.map((r) => [r.session_id, r]));
  const differs = (a: number | null | undefined, b: unknown): boolean => (a == null ? b != null : b == null || Math.abs(a - Number(b)) > 1e-9);
  return service.calls
    .filter((c) => {
      const s = stored.get(c.sessionId);
      const truth = c.participants.reduce((t, p) => t + p.totalDuration, 0);
      const recordings = Array.isArray(c.recordings) ? c.recordings.length : 0;
      return (parts.get(c.sessionId) ?? 0) !== c.participants.length || differs(s?.participant_total_minutes, truth) || (recs.get(c.sessionId) ?? 0) !== recordings ||
        differs(s?.total_audio_minutes, c.totalAudioMinutes) || differs(s?.total_video_minutes, c.totalVideoMinutes);
    })
    .map((c) => c.sessionId);
}

/** Starts the fake with `fake`, runs `body` with a fresh database and its settings (SETTINGS and `extra`), and closes the fake. */
async function withFake(name: string, fake: FakeOptions, extra: Record<string, unknown>, body: (service: FakeCallsService, database: string, settings: Settings) => Promise<void>): Promise<void> {
  const service = await FakeCallsService.start(fake);
  try {
    const database = join(tmp.dir, name);
    await body(service, database, settingsAt(service.baseUrls('app1'), database, { ...SETTINGS, ...extra }));
  } finally {
    await service.close();
  }
}

/**
 * First run whole; then `change` (time passes) and the answers leave `omit` out for one run, then
 * are whole again. Returns the three runs' status and the calls off after each.
 */
async function threeRuns(name: string, fake: FakeOptions, change: (s: FakeCallsService) => void, omit: readonly string[]): Promise<{ status: string[]; error: string; off: number[]; failedCalls: number }> {
  let leaveOut: readonly string[] = [];
  const service = await FakeCallsService.start({ seed: 31, calls: 60, listMinimal: true, spanHours: 24, ...fake, getAnswer: (a) => without(leaveOut)(a) });
  try {
    const database = join(tmp.dir, `${name}.db`);
    const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
    const status: string[] = [];
    const offAfter: number[] = [];
    const first = (await syncWith(settings)).results[0]!;
    status.push(first.status);
    change(service);
    leaveOut = omit;
    const second = (await syncWith(settings)).results[0]!;
    status.push(second.status);
    offAfter.push((await off(database, service)).length);
    leaveOut = [];
    const third = (await syncWith(settings)).results[0]!;
    status.push(third.status);
    offAfter.push((await off(database, service)).length);
    return { status, error: second.error ?? '', off: offAfter, failedCalls: second.failedCalls };
  } finally {
    await service.close();
  }
}

describe('answers to calls asked for again that leave out what an earlier answer had', () => {
  it('unfinished participants (the unsettled pass), the answer without participants: partial, kept, read whole on the next run', async () => {
    const r = await threeRuns('unsettled-participants', { ongoing: 0, lateMinutes: 2 }, (s) => s.settleMinutes(), ['participants', 'totalParticipants']);
    expect(r.status).toEqual(['ok', 'partial', 'ok']);
    expect(r.failedCalls).toBeGreaterThan(3);
    expect(r.error).toMatch(/call\(s\) asked for again lack details: Get Call gave nothing usable this time, so what earlier runs stored of them is kept/);
    expect(r.off[1]).toBe(0);
  });

  it('live calls that ended, the answer without participants: partial (their participants were live), read whole on the next run', async () => {
    const r = await threeRuns('live-participants', { ongoing: 6 }, (s) => s.endOngoing(), ['participants', 'totalParticipants']);
    expect(r.status).toEqual(['ok', 'partial', 'ok']);
    expect(r.failedCalls).toBe(6);
    expect(r.off[1]).toBe(0);
  });

  it('final recordings, the unsettled pass’s answer without recordings: kept from the earlier answer, exact and ok', async () => {
    const r = await threeRuns('unsettled-recordings', { ongoing: 0, lateMinutes: 2, recordings: { every: 2, listed: 'none' } }, (s) => s.settleMinutes(), ['recordings']);
    expect(r.status).toEqual(['ok', 'ok', 'ok']);
    expect(r.off).toEqual([0, 0]);
  });

  // Round 12 (F1): only the call's own minutes left out, filled from the answer given while live.
  it('live calls that ended, the answer without the call’s minutes: partial (the stored ones were live), read whole on the next run', async () => {
    const r = await threeRuns('live-minutes', { ongoing: 6 }, (s) => s.endOngoing(), ['totalAudioMinutes', 'totalVideoMinutes', 'totalDurationInMinutes', 'totalDuration']);
    expect(r.status).toEqual(['ok', 'partial', 'ok']);
    expect(r.failedCalls).toBe(6);
    expect(r.off[1]).toBe(0);
  });

  // Round 12 (F2): `recordings` is only present when hasRecording is true; an answer saying false
  // without the key had the stored recordings filled back in, for good, ok.
  it.each(['auto', 'always'] as const)('recordings deleted at the service (hasRecording false, no recordings key), detailFetch %s: removed, ok', async (detailFetch) => {
    await withFake(`deleted-recordings-${detailFetch}.db`, { seed: 9, calls: 40, ongoing: 0, spanHours: 24, recordings: { every: 2, listed: 'all' } }, { detailFetch }, async (service, database, settings) => {
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      const recorded = service.calls.filter((c) => Array.isArray(c.recordings));
      expect(recorded.length).toBeGreaterThan(5);
      for (const c of recorded) {
        c.hasRecording = false;
        delete c.recordings;
      }
      for (let run = 0; run < 2; run++) {
        const next = (await syncWith(settings)).results[0]!;
        expect(next.status, next.error).toBe('ok');
        expect(await off(database, service)).toEqual([]);
      }
    });
  });

  // Round 12 (F3): a call stored from its list entry because Get Call failed; the retry's answer
  // leaves recordings out, and the entry (1 of 2 recordings) filled them: 17 calls short, ok.
  it('a retried call, stored from an entry that carried less, the answer without recordings: partial, read whole on the next run', async () => {
    let phase = 1;
    const broken = new Set<string>();
    await withFake('retry-from-entry.db', {
      seed: 11, calls: 40, ongoing: 0, spanHours: 24, recordings: { every: 2, listed: 'first' },
      getAnswer: (a, c) => (phase === 1 && broken.has(c.sessionId) ? { sessionId: c.sessionId, status: { bad: true } } : phase === 2 ? without(['recordings'])(a) : a),
    }, { detailFetch: 'always' }, async (service, database, settings) => {
      for (const c of service.calls) if (Array.isArray(c.recordings)) broken.add(c.sessionId);
      expect(broken.size).toBeGreaterThan(5);
      expect((await syncWith(settings)).results[0]!.status).toBe('partial');
      phase = 2;
      const second = (await syncWith(settings)).results[0]!;
      expect(second.status).toBe('partial');
      expect(second.failedKept).toBe(broken.size);
      phase = 3;
      const third = (await syncWith(settings)).results[0]!;
      expect(third.status, third.error).toBe('ok');
      expect(await off(database, service)).toEqual([]);
    });
  });

  // Round 13 (F1): fields the list entry filled in were not in the stored payload; the unsettled
  // pass's answer, leaving them out again, had nothing to take them from: call minutes NULL, ok.
  it('a Get Call view without the call’s minutes (full entries supply them), the unsettled pass: the minutes stay, ok', async () => {
    await withFake('view-without-minutes.db', { seed: 33, calls: 120, ongoing: 0, spanHours: 24, lateMinutes: 4, getAnswer: without(['totalAudioMinutes', 'totalVideoMinutes', 'totalDurationInMinutes']) }, { detailFetch: 'always' }, async (service, database, settings) => {
      // Get Call answers a participant at zero whose entry gives minutes: an older state, kept as
      // listed and asked again (round 17 c), not stored as zero for the unsettled pass to mend.
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status).toBe('partial');
      expect(first.error).toMatch(/call\(s\) lack detail/);
      service.settleMinutes();
      const second = (await syncWith(settings)).results[0]!;
      expect(second.status, second.error).toBe('ok');
      expect(await off(database, service)).toEqual([]);
    });
  });

  // Round 13 (F3): the answer was judged an older state than its entry before what it left out was
  // filled: a view without `participants` "had none", partial on every run with the data complete.
  it('a Get Call view without participants (full entries carry them): ok and exact, run after run', async () => {
    await withFake('view-without-participants.db', { seed: 34, calls: 60, spanHours: 24, getAnswer: without(['participants']) }, { detailFetch: 'always' }, async (service, database, settings) => {
      for (let run = 0; run < 2; run++) {
        const r = (await syncWith(settings)).results[0]!;
        expect(r.status, r.error).toBe('ok');
        service.endOngoing();
      }
      const last = (await syncWith(settings)).results[0]!;
      expect(last.status, last.error).toBe('ok');
      expect(await off(database, service)).toEqual([]);
    });
  });

  // Round 13 (F2): a call stored from its entry after one unusable answer; the view never states
  // hasRecording, which the entry (now the stored payload) does: every later run partial, data complete.
  it('a Get Call view without hasRecording, a call stored from its entry after one unusable answer: partial once, then ok', async () => {
    const bad = new Set<string>();
    await withFake('view-without-has-recording.db', {
      seed: 35, calls: 60, ongoing: 0, spanHours: 24, recordings: { every: 2, listed: 'all' },
      getAnswer: (a, c) => (bad.delete(c.sessionId) ? { sessionId: c.sessionId, status: { bad: true } } : without(['hasRecording'])(a)),
    }, { detailFetch: 'always' }, async (service, database, settings) => {
      service.calls.forEach((c, i) => i % 7 === 0 && bad.add(c.sessionId));
      expect((await syncWith(settings)).results[0]!.status).toBe('partial');
      for (let run = 0; run < 2; run++) {
        const r = (await syncWith(settings)).results[0]!;
        expect(r.status, r.error).toBe('ok');
      }
      expect(await off(database, service)).toEqual([]);
    });
  });

  // Round 14 (A1): the settle audit asked again for calls whose minutes were revised (participants
  // and entries too, the entries outside the incremental window); the answers had no call minutes,
  // which were filled from the stored answer: stale call minutes under new participants, ok, 7 runs.
  it('the settle audit, a Get Call view without the call’s minutes, calls revised outside the listing window: partial, then exact after a full listing', async () => {
    const minutes = ['totalAudioMinutes', 'totalVideoMinutes', 'totalDurationInMinutes'];
    await withFake('settle-view-without-minutes.db', { seed: 36, calls: 120, ongoing: 0, spanHours: 48, getAnswer: without(minutes) }, { detailFetch: 'always', lookbackHours: 1 }, async (service, database, settings) => {
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      expect(await off(database, service)).toEqual([]);
      // Every call with minutes is revised; most lie inside the listing window (their entries, which
      // carry minutes, change), some outside it, where only the settle audit can see them.
      const revised = service.calls.filter((c) => c.participants.some((p) => p.totalDuration > 0));
      expect(revised.length).toBeGreaterThan(service.calls.length / 2);
      for (const c of revised) {
        for (const p of c.participants) Object.assign(p, { totalAudioMinutes: p.totalAudioMinutes * 1.5, totalVideoMinutes: p.totalVideoMinutes * 1.5, totalDuration: p.totalDuration * 1.5 });
        const sum = (k: 'totalAudioMinutes' | 'totalVideoMinutes'): number => c.participants.reduce((t, p) => t + p[k], 0);
        Object.assign(c, { totalAudioMinutes: sum('totalAudioMinutes'), totalVideoMinutes: sum('totalVideoMinutes'), totalDurationInMinutes: sum('totalAudioMinutes') + sum('totalVideoMinutes') });
      }
      // A night passes for the revised calls: the settle audit asks again for calls written over an
      // hour ago, so its sample draws from revised calls only, and one hit makes it ask for the rest.
      // Drawn from every call, it drew 8 of the 53 not fetched by this run's listing, 16 of them
      // revised, and missed them all about once in 30 runs (two CI runs at 53a108d): that is the
      // sample's documented limit (README, "seen by the settle audit only when its sample draws that
      // call"), not what this test is about.
      const ids = revised.map((c) => c.sessionId);
      await withStore(database, ({ db }) => sql`update calls set synced_at = synced_at - 7200 where session_id in (${sql.join(ids)})`.execute(db));
      const second = (await syncWith(settings)).results[0]!;
      expect(second.status).toBe('partial');
      expect(second.error).toMatch(/call\(s\) asked for again lack details/);
      const full = (await syncWith(settings, { full: true })).results[0]!;
      expect(full.status, full.error).toBe('ok');
      expect(await off(database, service)).toEqual([]);
    });
  });
});

