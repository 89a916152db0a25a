import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';

/**
 * Get Call answers shaped in ways the documentation allows, from a hostile probe of session 29
 * (helper-61), each ok with the database other than the service before its fix:
 * - an answer leaving out `type` (or mode, receiver, status) while stating its media: a call asked
 *   for by id (the audits of calls stored from entries, the retry list) stored NULL there, and the
 *   audit read it as a difference, so every call was fetched and stored so (204 of 300, for good);
 * - one transcription as an object: dropped (55 of 55), as an array of one it is kept;
 * - each recording twice, its URL signed anew each time: stored twice, recording minutes doubled;
 * - Get Call showing only the participants who joined: an "older state" than the entry (which
 *   also lists invitees), partial on every run, nothing at stake;
 * - each session stated twice, the copy's minutes rounded: both stored, minutes counted twice.
 * Each runs three nights (a new call before each after the first) and compares the database with
 * the fake's truth after each.
 */
const BASE = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;
const tmp = tempDir('callsync-get-shapes-');
afterAll(() => tmp.cleanup());

/**
 * Three nights against a fake with `opts`: each run must be ok and exact (`loud`: a run may be
 * partial instead, never ok with anything wrong, and the last must be ok and exact).
 */
async function nights(name: string, opts: FakeOptions, extra: Record<string, unknown> = {}, o: { setup?: (s: FakeCallsService) => void; invitees?: boolean; loud?: boolean } = {}): Promise<void> {
  const service = await FakeCallsService.start({ calls: 300, ongoing: 0, ...opts });
  o.setup?.(service);
  const database = join(tmp.dir, `${name}.db`);
  try {
    const settings = settingsAt(service.baseUrls('app1'), database, { ...BASE, ...extra });
    for (let night = 0; night < 3; night++) {
      if (night > 0) {
        await withStore(database, ({ db }) => sql`update calls set synced_at = synced_at - 7200`.execute(db));
        service.addCall({ at: Math.floor(Date.now() / 1000) - 300, status: 'ended' });
      }
      const r = (await syncWith(settings)).results[0]!;
      const wrong = await callsVsTruth(service, database, { invitees: o.invitees ?? true });
      if (o.loud && night < 2 && r.status !== 'ok') continue;
      expect({ night, status: r.status, error: r.error, wrong: wrong.slice(0, 3) }).toEqual({ night, status: 'ok', error: undefined, wrong: [] });
    }
  } finally {
    await service.close();
  }
}

/** The answer states its media (arrays, maybe empty) and leaves `keys` out. */
const leaving = (...keys: string[]) => (a: Wire): Wire => {
  const out: Wire = { ...a, recordings: a.recordings ?? [], transcriptions: a.transcriptions ?? [] };
  for (const k of keys) delete out[k];
  return out;
};

describe('Get Call answers shaped as the documentation allows: the database matches the service, ok', () => {
  it.each([['type'], ['mode', 'receiverType'], ['receiver'], ['status']])('auto: Get Call leaving out %s (media stated): filled from the stored entry, no false finding', async (...keys) => {
    await nights(`omit-${keys.join('-')}`, { seed: 612, getAnswer: leaving(...keys) });
  });

  it('always: Get Call leaving out type, calls asked again by id after a bare 404: type kept', async () => {
    await nights('omit-type-always', { seed: 613, bare404First: 10, getAnswer: leaving('type') }, { detailFetch: 'always' }, { loud: true });
  });

  it.each(['auto', 'always'] as const)('%s: one transcription as an object, in the list and in Get Call: stored', async (detailFetch) => {
    const single = (a: Wire): Wire => (Array.isArray(a.transcriptions) && a.transcriptions.length === 1 ? { ...a, transcriptions: a.transcriptions[0] } : a);
    await nights(`one-transcription-${detailFetch}`, { seed: 670, getAnswer: single, listEntry: single }, { detailFetch }, {
      setup: (s) => s.calls.filter((c) => c.status === 'ended').forEach((c, i) => {
        if (i % 4 !== 0) return;
        c.hasTranscription = true;
        c.transcriptions = [{ tid: `${c.sessionId}-t0`, mid: 'm', roomName: 'r', startTime: c.startedAt, endTime: c.endedAt, transcriptDate: c.endedAt, transcriptUrl: `https://t.invalid/${c.sessionId}` }];
      }),
    });
  });

  it('always: each recording twice, its URL signed anew each time: stored once, its minutes once', async () => {
    let sig = 0;
    const signed = (r: Wire): Wire => ({ ...r, recording_url: `${String(r.recording_url)}?X-Amz-Signature=${(++sig).toString(16)}` });
    await nights('recording-twice', { seed: 642, recordings: { every: 3, listed: 'all' }, getAnswer: (a) => (Array.isArray(a.recordings) ? { ...a, recordings: (a.recordings as Wire[]).flatMap((r) => [signed(r), signed(r)]) } : a) }, { detailFetch: 'always' });
  });

  // helper-61's borderline: each joined participant stated twice, the copy's minutes rounded (or
  // its leftAt missing): both stored, 1,940 user-minutes counted as 3,243, ok. Which copy holds is
  // not known: the answer is unusable, the call kept as listed (here the list is right), partial.
  it.each([
    ['minutes rounded', (p: Wire): Wire => ({ ...p, totalAudioMinutes: Math.round((p.totalAudioMinutes as number) * 1e4) / 1e4, totalVideoMinutes: Math.round((p.totalVideoMinutes as number) * 1e4) / 1e4, totalDuration: Math.round((p.totalDuration as number) * 1e4) / 1e4 })],
    ['leftAt missing', ({ leftAt: _l, ...p }: Wire): Wire => p],
  ])('always: Get Call stating each session twice, the copy\'s %s: never ok, nothing counted twice', async (_name, copy) => {
    const service = await FakeCallsService.start({ calls: 120, ongoing: 0, seed: 650, getAnswer: (a) => ({ ...a, participants: (a.participants as Wire[]).flatMap((p) => (p.isJoined ? [p, copy(p)] : [p])) }) });
    const database = join(tmp.dir, `twice-${_name.replace(/ /g, '-')}.db`);
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, { ...BASE, detailFetch: 'always' });
      for (let run = 0; run < 2; run++) {
        const r = (await syncWith(settings)).results[0]!;
        expect(r.status).toBe('partial');
        expect(r.error).toMatch(/call\(s\) (asked for again )?lack details/);
        expect(await callsVsTruth(service, database)).toEqual([]);
      }
      const why = await withStore(database, ({ db }) => db.selectFrom('calls').select('detail_error').where('detail_error', 'is not', null).executeTakeFirst());
      expect(why?.detail_error).toMatch(/contradicts itself: participant .* is stated twice/);
    } finally {
      await service.close();
    }
  });

  it.each(['auto', 'always'] as const)('%s: Get Call showing only those who joined, the list invitees too: ok, every participant with minutes stored', async (detailFetch) => {
    const joinedOnly = (a: Wire): Wire => {
      const ps = (a.participants as Wire[]).filter((p) => p.isJoined);
      return { ...a, participants: ps, totalParticipants: ps.length };
    };
    await nights(`joined-only-${detailFetch}`, { seed: 660, getAnswer: joinedOnly }, { detailFetch }, { invitees: false });
  });
});
