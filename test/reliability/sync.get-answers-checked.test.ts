import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * What Get Call answers is checked before it is believed (a hostile-fake probe, 2026-11-26, found
 * both of these ending ok with calls wrong for good: once stored under their list fingerprint,
 * nothing looked at them again, not `sync --full`, not `verify`):
 * - a bare 404 (a proxy's HTML page, no ERR_CALL_SESSION_NOT_FOUND) marked calls that exist as
 *   gone; now it counts as a strike, like a live call Get Call does not know, and the call is asked
 *   again on the next runs (gone only after three in a row);
 * - an older state of the call than its list entry (a lagging replica: the entry says
 *   hasRecording, Get Call says it has none) was stored and never asked for again; now it is
 *   unusable, kept as listed, and asked for again on the next runs;
 * - ERR_CALL_SESSION_NOT_FOUND for the newest calls, which the listing shows (a replica behind the
 *   listing): believed, and never asked again while the entry did not change; now a recent call
 *   stored as not found that is still listed is asked for again (within settleDays); and one whose
 *   entry is the whole call is stored from it, unmarked (probe77 fuzz: marked, lost for a night).
 */
const SETTINGS = { pageSize: 50, detailFetch: 'always', lookbackHours: 24, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;

const tmp = tempDir('callsync-get-checked-');
afterAll(() => tmp.cleanup());

async function stored(database: string) {
  return withStore(database, async ({ db }) => ({
    calls: await db.selectFrom('calls').select(['session_id', 'not_found_at', 'detail_error', 'details_source']).execute(),
    participants: await db.selectFrom('call_participants').select('session_id').execute(),
  }));
}

async function start(fake: FakeOptions): Promise<FakeCallsService> {
  return FakeCallsService.start({ calls: 200, ongoing: 0, ...fake });
}

describe('Get Call answers are checked before they are believed', () => {
  it('a bare 404 on the first Get of every 8th call: partial, nothing marked gone; the next run stores every call whole, ok', async () => {
    const service = await start({ seed: 51, bare404First: 8 });
    try {
      const database = join(tmp.dir, 'bare404.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const first = (await syncWith(settings)).results[0]!;
      const hit = service.calls.filter((_, i) => i % 8 === 0).length;
      expect(first.status).toBe('partial');
      expect(first.error).toMatch(new RegExp(`^app app1 \\(us\\): ${hit} call\\(s\\) lack details[^\\n]*$`));
      let s = await stored(database);
      expect(s.calls.filter((c) => c.not_found_at !== null)).toEqual([]);
      expect(s.calls.filter((c) => c.detail_error !== null).map((c) => c.detail_error)).toEqual(Array(hit).fill('Get Call answered 404 without ERR_CALL_SESSION_NOT_FOUND (run 1 of 3 before it is taken as gone)'));

      const second = (await syncWith(settings)).results[0]!;
      expect(second.status, second.error).toBe('ok');
      s = await stored(database);
      expect(s.calls.filter((c) => c.not_found_at !== null || c.detail_error !== null)).toEqual([]);
      expect(s.calls.length).toBe(service.calls.length);
      expect(s.participants.length).toBe(service.calls.reduce((n, c) => n + c.participants.length, 0));
    } finally {
      await service.close();
    }
  });

  it('the first Get of each recorded call answers an older state (no recordings) while its list entry says hasRecording: partial, then every recording stored, ok', async () => {
    const service = await start({ seed: 52, recordings: { every: 4, listed: 'none', staleFirstGet: true } });
    try {
      const database = join(tmp.dir, 'stale.db');
      const settings = settingsAt(service.baseUrls('app1'), database, { ...SETTINGS, detailFetch: 'auto' });
      const recorded = service.calls.filter((c) => Array.isArray(c.recordings));
      expect(recorded.length).toBeGreaterThan(10);
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status).toBe('partial');
      expect(first.error).toMatch(new RegExp(`^app app1 \\(us\\): ${recorded.length} call\\(s\\) lack details[^\\n]*$`));
      const errors = await withStore(database, ({ db }) => db.selectFrom('calls').select('detail_error').where('detail_error', 'is not', null).execute());
      expect(new Set(errors.map((e) => e.detail_error))).toEqual(new Set(['Get Call answered an older state of the call than its list entry (the list entry says hasRecording, Get Call does not)']));

      const second = (await syncWith(settings)).results[0]!;
      expect(second.status, second.error).toBe('ok');
      const rows = await withStore(database, ({ db }) => db.selectFrom('call_recordings').select('session_id').execute());
      expect(rows.length).toBe(recorded.length * 2);
    } finally {
      await service.close();
    }
  });

  it('not found for the 5 newest listed calls on their first Get: stored from their whole entries, unmarked, ok; the next run asks again, ok', async () => {
    const service = await start({ seed: 53, notFoundFirst: 5 });
    try {
      const database = join(tmp.dir, 'replica.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status, first.error).toBe('ok');
      // The listing shows each whole: stored from its entry, not marked gone (probe77 fuzz).
      expect((await stored(database)).calls.filter((c) => c.not_found_at !== null)).toEqual([]);
      expect(first.notFound).toBe(0);

      const second = (await syncWith(settings)).results[0]!;
      expect(second.status, second.error).toBe('ok');
      const s = await stored(database);
      expect(s.calls.filter((c) => c.not_found_at !== null)).toEqual([]);
      expect(s.participants.length).toBe(service.calls.reduce((n, c) => n + c.participants.length, 0));
      // Settled: a third run asks Get Call at most for those 5 once more (answered by id on the
      // second run's retry pass, they were written without a list fingerprint: detailFetch always
      // asks for their entries again), a fourth for nothing.
      const third = (await syncWith(settings)).results[0]!;
      expect(third.detailFetches).toBeLessThanOrEqual(5);
      const fourth = (await syncWith(settings)).results[0]!;
      expect(fourth.detailFetches).toBe(0);
    } finally {
      await service.close();
    }
  });
});

// Probe round 17 (a): a 403 with a code of its own for one call failed the whole app, blaming the key.
describe('Get Call refusing one call (403 with a code of its own), not the key', () => {
  it('the other calls stored; partial naming that call without key advice; the call stored once the service answers', async () => {
    const service = await start({ seed: 57 });
    try {
      const refused = service.calls.find((c) => c.status === 'ended')!.sessionId;
      service.getForbidden.add(refused);
      const database = join(tmp.dir, 'get-403-one-call.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status).toBe('partial');
      expect(first.error).toMatch(/1 call\(s\)/);
      const rows = await stored(database);
      expect(rows.calls).toHaveLength(service.calls.length);
      const kept = rows.calls.find((c) => c.session_id === refused)!;
      expect(kept.detail_error).toMatch(/HTTP 403 ERR_CALL_ACCESS_RESTRICTED/);
      expect(kept.detail_error).not.toMatch(/apiKeyEnv|REST API key/);
      service.getForbidden.clear();
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      expect((await stored(database)).calls.find((c) => c.session_id === refused)!.detail_error).toBeNull();
    } finally {
      await service.close();
    }
  });
});

describe('Get Call answers that leave out what the list entry showed', () => {
  it('a detail view without startedAt and the call-level minutes: the list entry fills them, so billing sees every call, ok', async () => {
    const omitted = ['startedAt', 'totalAudioMinutes', 'totalVideoMinutes', 'totalDurationInMinutes'];
    const service = await FakeCallsService.start({ seed: 57, calls: 120, ongoing: 0, getOmits: omitted });
    try {
      const database = join(tmp.dir, 'sparse-get.db');
      const r = (await syncWith(settingsAt(service.baseUrls('app1'), database, SETTINGS))).results[0]!;
      expect(r.status, r.error).toBe('ok');
      const rows = await withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'started_at', 'total_audio_minutes', 'total_video_minutes', 'details_source']).execute());
      const byId = new Map(rows.map((x) => [x.session_id, x]));
      const wrong = service.calls.filter((c) => {
        const s = byId.get(c.sessionId);
        return !s || s.details_source !== 'detail' || s.started_at !== (c.startedAt ?? null) || s.total_audio_minutes !== (c.totalAudioMinutes ?? null) || s.total_video_minutes !== (c.totalVideoMinutes ?? null);
      });
      expect(service.calls.filter((c) => c.startedAt !== undefined).length).toBeGreaterThan(50);
      expect(wrong.map((c) => c.sessionId)).toEqual([]);
    } finally {
      await service.close();
    }
  });
});
