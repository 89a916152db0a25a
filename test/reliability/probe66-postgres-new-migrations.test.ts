import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { up as totalFromParts } from '../../migrations/20261130T010000_call_total_from_parts.js';
import { computeBilling } from '../../src/export/billing.js';
import { resolvePeriod } from '../../src/export/period.js';
import { collectReportData } from '../../src/report/collect-report-data.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/** probe66: this session's migrations and the new columns on PostgreSQL. */
const tmp = tempDir('probe66-pg-');
const dialects = await testDialects();
const dbs = databaseFactory('postgres', tmp.dir);
afterAll(async () => {
  await dbs.dropAll();
  tmp.cleanup();
});

describe.runIf(dialects.includes('postgres'))('probe66 PostgreSQL', () => {
  it('total from parts: the migration mends NULL totals and their figures; unreadable entries come and go', async () => {
    const drop = (w: Wire): Wire => { const { totalDurationInMinutes: _, ...rest } = w; return rest; };
    const service = await FakeCallsService.start({ seed: 3, calls: 30, ongoing: 0, spanHours: 1, listEntry: drop, getAnswer: drop, malformedAfterNewest: true });
    try {
      const url = await dbs.fresh('probe66_total');
      const settings = settingsAt(service.baseUrls(), url, {});
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status).toBe('partial'); // two unreadable entries
      const again = (await syncWith(settings, { full: true })).results[0]!;
      expect(again.status).toBe('partial');
      await withStore(url, async ({ db: k }) => {
        const period = resolvePeriod({ month: new Date(service.calls[0]!.initiatedAt * 1000).toISOString().slice(0, 7) });
        await sql`update calls set total_duration_minutes = null`.execute(k);
        await sql`update callsync_settings set value = '0.02' where key = 'reconcile_tolerance_minutes'`.execute(k);
        expect((await computeBilling(k, period)).find((r) => r.row_kind === 'total')!.call_total_minutes).toBe(0);
        await totalFromParts(k);
        const mended = (await computeBilling(k, period)).find((r) => r.row_kind === 'total')!;
        expect(mended.call_total_minutes).toBeGreaterThan(0);
        expect(mended.call_total_minutes).toBeCloseTo(mended.call_audio_minutes + mended.call_video_minutes, 6);
        for (const timezone of ['UTC', 'Asia/Kolkata']) {
          const data = await collectReportData(k, resolvePeriod({ month: new Date(service.calls[0]!.initiatedAt * 1000).toISOString().slice(0, 7), timezone }), { databasePath: url });
          const billed = data.billing.filter((r) => r.row_kind === 'total').reduce((n, r) => n + r.user_minutes, 0);
          expect(data.daily.points.reduce((n, p) => n + p.userMinutes, 0)).toBeCloseTo(billed, 6);
        }
        const rejected = await k.selectFrom('rejected_records').select(['record_key', 'unlisted_at']).execute();
        expect(rejected.length).toBeGreaterThan(0);
      });
    } finally {
      await service.close();
    }
  });
});
