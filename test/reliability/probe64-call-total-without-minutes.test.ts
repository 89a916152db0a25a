import { join } from 'node:path';
import { sql } from 'kysely';
import { up as totalFromParts } from '../../migrations/20261130T010000_call_total_from_parts.js';
import { afterAll, describe, expect, it } from 'vitest';
import { computeBilling, computeBillingDetail } from '../../src/export/billing.js';
import { resolvePeriod } from '../../src/export/period.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe64 F4 (fixed in session 30: the transform stores audio + video, and a migration does the same
 * for calls stored before): a call that states its totals as totalAudioMinutes, totalVideoMinutes and
 * the timer totalDuration "HH:MM:SS" but leaves out totalDurationInMinutes (which the docs define as
 * audio + video; callsync accepts such an entry as complete) was exported with call_total_minutes 0:
 * the billing export's call-level total of the month 0.0000 and its delta_minutes ("what
 * participant billing adds over call-level totals") the whole of the user-minutes, while every one
 * of those calls is counted in calls_participant_sum (its audio and video totals equal its
 * participants'). Each such call is also given audio_plus_video_ne_total, though nothing it stated
 * differs from audio + video. A stated-nothing total must not read as a stated 0.
 */
const tmp = tempDir('probe64-nototal-');
afterAll(() => tmp.cleanup());

describe('a call without totalDurationInMinutes', () => {
  it('has its audio + video as its call-level total in the billing export, not 0', async () => {
    const drop = (w: Wire): Wire => {
      const { totalDurationInMinutes: _, ...rest } = w;
      return rest;
    };
    const service = await FakeCallsService.start({ seed: 3, calls: 10, ongoing: 0, spanHours: 1, listEntry: drop, getAnswer: drop });
    try {
      const db = join(tmp.dir, 'nototal.db');
      expect((await syncWith(settingsAt(service.baseUrls(), db, {}))).results[0]!.status).toBe('ok');
      await withStore(db, async ({ db: k }) => {
        const period = resolvePeriod({ month: new Date(service.calls[0]!.initiatedAt * 1000).toISOString().slice(0, 7) });
        const total = (await computeBilling(k, period)).find((r) => r.row_kind === 'total')!;
        expect(total.calls_participant_sum).toBe(total.calls);
        expect(total.user_minutes).toBeGreaterThan(0);
        expect(total.call_total_minutes).toBeCloseTo(total.call_audio_minutes + total.call_video_minutes, 6);
        expect(total.delta_minutes).toBeCloseTo(0, 6);
        for (const r of await computeBillingDetail(k, period)) expect(r.issues.split(','), r.session_id).not.toContain('audio_plus_video_ne_total');
        // A database stored before the fix (NULL totals, figures read as 0): the migration mends both.
        await sql`update calls set total_duration_minutes = null`.execute(k);
        await sql`update callsync_settings set value = '0.02' where key = 'reconcile_tolerance_minutes'`.execute(k); // refills call_figure_rows
        expect((await computeBilling(k, period)).find((r) => r.row_kind === 'total')!.call_total_minutes).toBe(0);
        await totalFromParts(k);
        const mended = (await computeBilling(k, period)).find((r) => r.row_kind === 'total')!;
        expect(mended.call_total_minutes).toBeCloseTo(mended.call_audio_minutes + mended.call_video_minutes, 6);
        expect(mended.call_total_minutes).toBeGreaterThan(0);
      });
    } finally {
      await service.close();
    }
  });
});
