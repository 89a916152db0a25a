import { join } from 'node:path';
import { sql } from 'kysely';
import { syncWith, tempDir, withStore } from '../../helpers/harness.js';
import { differsSetting } from '../../../src/sync/list-audit.js';
import { FakeCallsService, type FakeOptions } from './fake-calls-service.js';
import { settingsAt } from './matrix.js';
import { callsVsTruth } from './stored-vs-truth.js';

const BASE = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;
export const tmp = tempDir('callsync-nights-');
export interface Night { night: number; recentWrong: number; firstRecentWrong?: string | undefined; status: string; error?: string | undefined; wrong: number; firstWrong?: string | undefined; detailFetches: number; auditedAgain: number; notFound: number; failed: number; retries: number; differs: boolean }

/**
 * Nightly syncs against a hostile fake (synced_at moved back two hours between them, a new call each
 * night), each compared with the fake's truth (callsVsTruth). Shared by the media and audit probes.
 */
export async function nights(name: string, opts: FakeOptions, o: { n?: number; extra?: Record<string, unknown>; args?: (night: number) => Record<string, unknown>; setup?: (s: FakeCallsService) => void; between?: (s: FakeCallsService, night: number) => void; full?: (night: number) => boolean } = {}): Promise<Night[]> {
  const service = await FakeCallsService.start({ calls: 300, ongoing: 0, ...opts });
  o.setup?.(service);
  const database = join(tmp.dir, `${name}.db`);
  const out: Night[] = [];
  try {
    const settings = settingsAt(service.baseUrls('app1'), database, { ...BASE, ...(o.extra ?? {}) });
    for (let night = 0; night < (o.n ?? 3); night++) {
      if (night > 0) {
        await withStore(database, ({ db }) => sql`update calls set synced_at = synced_at - 7200`.execute(db));
        service.addCall({ at: Math.floor(Date.now() / 1000) - 300, status: 'ended' });
        o.between?.(service, night);
      }
      const r = (await syncWith(settings, { ...(o.full?.(night) ? { full: true } : {}), ...(o.args?.(night) ?? {}) })).results[0]!;
      const wrong = await callsVsTruth(service, database);
      const extra = await withStore(database, async ({ db }) => ({
        retries: Number((await sql<{ n: number }>`select count(*) as n from detail_retries`.execute(db)).rows[0]!.n),
        differs: (await db.selectFrom('callsync_settings').select('value').where('key', '=', differsSetting('app1', 'us')).executeTakeFirst()) !== undefined,
      }));
      const recentIds = new Set(service.calls.filter((c) => c.initiatedAt > Date.now() / 1000 - 20 * 3600).map((c) => c.sessionId));
      const recentWrong = wrong.filter((w) => recentIds.has(w.split(':')[0]!));
      out.push({ night, recentWrong: recentWrong.length, firstRecentWrong: recentWrong[0]?.slice(0, 200), status: r.status, error: r.error?.slice(0, 300), wrong: wrong.length, firstWrong: wrong[0]?.slice(0, 300), detailFetches: r.detailFetches, auditedAgain: r.auditedAgain, notFound: r.notFound, failed: r.failedCalls, ...extra });
    }
  } finally {
    await service.close();
  }
  return out;
}

