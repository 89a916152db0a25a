import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall, type FakeOptions, type FakeParticipant, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * Details a service has not worked out yet the night a call ends, under a list entry that never
 * changes (hostile-fake probe round 9, F7–F9): Get Call answers `hasTranscription: true` with no
 * transcription yet, a joined participant without any minute fields, a recording without its
 * duration; the next night it answers them whole. None of these looked unsettled (only zero minutes
 * and missing recordings did), so no run asked again: the transcriptions, the participant's minutes
 * and the recording minutes were missing for good, every run ok, `sync --full` too.
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 2, requestTimeoutMs: 2_000 } as const;

const tmp = tempDir('callsync-pending-details-');
afterAll(() => tmp.cleanup());

/** Every third call that ended with two or more joined participants: the calls the service answers late. */
function affected(service: FakeCallsService): FakeCall[] {
  return service.calls.filter((c) => c.status === 'ended' && c.participants.filter((p) => p.isJoined).length >= 2).filter((_, i) => i % 3 === 0);
}

/**
 * Two nights: Get Call answers `answer(a, c, settled, late)` with `settled` false the first night,
 * true the second (`late`: the affected calls). `off` names the calls whose stored details differ
 * from the service's whole ones: after the first night exactly the affected calls, after the second
 * none; both runs ok.
 */
async function twoNights(
  name: string,
  fake: FakeOptions,
  answer: (a: Wire, c: FakeCall, settled: boolean, late: ReadonlySet<FakeCall>) => Wire,
  off: (database: string, service: FakeCallsService) => Promise<string[]>,
): Promise<void> {
  let settled = false;
  let late = new Set<FakeCall>();
  // Minimal list entries (no minutes, no media): every call is fetched; all ended within the last day.
  const service = await FakeCallsService.start({ seed: 91, calls: 90, ongoing: 0, listMinimal: true, spanHours: 24, ...fake, getAnswer: (a, c) => answer(a, c, settled, late) });
  try {
    late = new Set(affected(service));
    expect(late.size).toBeGreaterThan(3);
    const database = join(tmp.dir, `${name}.db`);
    const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
    const first = (await syncWith(settings)).results[0]!;
    expect(first.status, first.error).toBe('ok');
    expect((await off(database, service)).sort()).toEqual([...late].map((c) => c.sessionId).sort());
    settled = true;
    const second = (await syncWith(settings)).results[0]!;
    expect(second.status, second.error).toBe('ok');
    expect(await off(database, service)).toEqual([]);
  } finally {
    await service.close();
  }
}

describe('details the service answers later, under an unchanged list entry, are read when they arrive', () => {
  it('hasTranscription with no transcription yet (round 9, F7)', async () => {
    await twoNights(
      'transcription',
      {},
      (a, c, settled, late) => {
        if (!late.has(c)) return a;
        return { ...a, hasTranscription: true, transcriptions: settled ? [{ tid: `${c.sessionId}-t0`, transcriptUrl: `https://tx.invalid/${c.sessionId}.txt`, startTime: c.startedAt, endTime: c.endedAt }] : [] };
      },
      async (database, service) => {
        const rows = await withStore(database, ({ db }) => db.selectFrom('call_transcriptions').select('session_id').execute());
        const stored = new Set(rows.map((r) => r.session_id));
        return affected(service).filter((c) => !stored.has(c.sessionId)).map((c) => c.sessionId);
      },
    );
  });

  it('a joined participant without any minute fields yet (round 9, F8)', async () => {
    await twoNights(
      'participant-minutes',
      {},
      (a, c, settled, late) => {
        if (settled || !late.has(c)) return a;
        const ps = (a.participants as FakeParticipant[]).map((p) => ({ ...p }));
        const last = ps.findLastIndex((p) => p.isJoined);
        const { totalAudioMinutes: _a, totalVideoMinutes: _v, totalDuration: _d, ...rest } = ps[last]!;
        ps[last] = rest as FakeParticipant;
        return { ...a, participants: ps };
      },
      async (database, service) => {
        const rows = await withStore(database, ({ db }) => db.selectFrom('call_participants').select(['session_id', 'total_duration_minutes']).execute());
        const stored = new Map<string, number>();
        for (const r of rows) stored.set(r.session_id, (stored.get(r.session_id) ?? 0) + (r.total_duration_minutes ?? 0));
        return service.calls.filter((c) => Math.abs((stored.get(c.sessionId) ?? 0) - c.participants.reduce((s, p) => s + p.totalDuration, 0)) > 1e-9).map((c) => c.sessionId);
      },
    );
  });

  it('a recording without its duration yet (round 9, F9)', async () => {
    await twoNights(
      'recording-duration',
      // Two recordings on every ended call; the affected ones answer them without a duration at first.
      { recordings: { every: 1, listed: 'none' } },
      (a, c, settled, late) => {
        if (settled || !late.has(c)) return a;
        return { ...a, recordings: (a.recordings as Wire[]).map((r) => ({ ...r, duration: null, endTime: null })) };
      },
      async (database, service) => {
        const rows = await withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'recording_minutes']).execute());
        const stored = new Map(rows.map((r) => [r.session_id, r.recording_minutes]));
        const truth = (c: FakeCall): number => ((c.recordings as { duration: number }[] | undefined) ?? []).reduce((s, r) => s + r.duration, 0);
        return service.calls.filter((c) => Math.abs((stored.get(c.sessionId) ?? 0) - truth(c)) > 1e-9).map((c) => c.sessionId);
      },
    );
  });
  // Round 10 (F4): a recording with no times and no duration (the SDK's single recordingUrl) never
  // gets a duration; taken as unsettled, every such call was asked again on every run.
  it('a recording given only as recordingUrl is not waited for: the next run asks Get Call for nothing', async () => {
    const service = await FakeCallsService.start({
      seed: 92, calls: 60, ongoing: 0, listMinimal: true, spanHours: 24, recordings: { every: 1, listed: 'none' },
      getAnswer: (a) => {
        if (!Array.isArray(a.recordings)) return a;
        const { recordings, ...rest } = a;
        return { ...rest, recordingUrl: `https://rec.invalid/${String((recordings as Wire[])[0]!.rid)}.mp4` };
      },
    });
    try {
      const database = join(tmp.dir, 'recording-url.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      const stored = await withStore(database, ({ db }) => db.selectFrom('call_recordings').select('rid').execute());
      expect(stored.length).toBeGreaterThan(10);
      const asked = service.getIds.length;
      const second = (await syncWith(settings)).results[0]!;
      expect(second.status, second.error).toBe('ok');
      expect(service.getIds.length - asked).toBe(0);
    } finally {
      await service.close();
    }
  });
});
