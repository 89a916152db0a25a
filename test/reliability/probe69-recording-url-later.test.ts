import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';

/**
 * A recording the service lists before its file is ready: rid, times and duration stated, its
 * `recording_url` null until the file is processed. Under an unchanged list entry (entries without
 * media), nothing asked for the URL again but the settle audit's sample of 8 a run, and a URL alone
 * coming is no finding that widens it: the URLs of the calls it did not draw stayed NULL for good,
 * every run ok (probe69).
 */
describe('probe69: recording files whose URL comes after the call was fetched', () => {
  const tmp = tempDir('callsync-probe69-recurl-');
  let service: FakeCallsService;
  let processing = true;

  beforeAll(async () => {
    service = await FakeCallsService.start({
      calls: 60, ongoing: 0, spanHours: 40, seed: 69, listMinimal: true,
      recordings: { every: 2, listed: 'none' },
      getAnswer: (answer) => {
        if (!processing || !Array.isArray(answer.recordings)) return answer;
        return { ...answer, recordings: (answer.recordings as Record<string, unknown>[]).map((r) => ({ ...r, recording_url: null })) };
      },
    });
  });
  afterAll(async () => {
    await service.close();
    tmp.cleanup();
  });

  it('every recording ends with the URL the service holds, or the run is not ok', async () => {
    const database = join(tmp.dir, 'rec.db');
    const settings = settingsAt(service.baseUrls('app1'), database, { detailFetch: 'auto', lookbackHours: 24, settleDays: 3, concurrency: 4 });
    const truth = new Map(service.calls.flatMap((c) => (Array.isArray(c.recordings) ? (c.recordings as { rid: string; recording_url: string }[]).map((r) => [r.rid, r.recording_url] as const) : [])));
    expect(truth.size).toBeGreaterThan(16);

    const first = (await syncWith(settings)).results[0]!;
    expect(['ok', 'partial']).toContain(first.status);
    // The files are processed; later nights (synced_at moved back as the hours pass).
    processing = false;
    for (let night = 1; night <= 4; night++) {
      await withStore(database, ({ db }) => sql`update calls set synced_at = synced_at - 7200`.execute(db));
      const r = (await syncWith(settings)).results[0]!;
      const stored = await withStore(database, ({ db }) => db.selectFrom('call_recordings').select(['rid', 'recording_url']).execute());
      const wrong = stored.filter((s) => truth.get(s.rid) !== s.recording_url);
      if (r.status === 'ok') expect({ night, wrong: wrong.length, first: wrong[0] }).toEqual({ night, wrong: 0, first: undefined });
    }
    // By the last night every URL is stored.
    const stored = await withStore(database, ({ db }) => db.selectFrom('call_recordings').select(['rid', 'recording_url']).execute());
    expect(stored.filter((s) => truth.get(s.rid) !== s.recording_url)).toEqual([]);
  });

  it('a service that never states URLs, its Get Call leaving participants out: ok and exact, night after night', async () => {
    const noUrl = (w: Record<string, unknown>): Record<string, unknown> =>
      Array.isArray(w.recordings) ? { ...w, recordings: (w.recordings as Record<string, unknown>[]).map(({ recording_url: _, ...r }) => r) } : w;
    const svc = await FakeCallsService.start({ calls: 40, ongoing: 0, seed: 70, spanHours: 40, recordings: { every: 2, listed: 'all' }, getOmits: ['participants'], listEntry: noUrl, getAnswer: noUrl });
    try {
      const database = join(tmp.dir, 'never-urls.db');
      const settings = settingsAt(svc.baseUrls('app1'), database, { detailFetch: 'always', lookbackHours: 24, settleDays: 3, concurrency: 4 });
      for (let night = 0; night < 3; night++) {
        if (night > 0) await withStore(database, ({ db }) => sql`update calls set synced_at = synced_at - 7200`.execute(db));
        const r = (await syncWith(settings)).results[0]!;
        expect(r.status, r.error).toBe('ok');
        expect(await callsVsTruth(svc, database)).toEqual([]);
      }
    } finally {
      await svc.close();
    }
  });
});
