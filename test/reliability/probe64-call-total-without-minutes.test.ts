import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { computeBilling, computeBillingDetail } from '../../src/export/billing.js';
import { resolvePeriod } from '../../src/export/period.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe64 F4 (not fixed): a call that states its totals as totalAudioMinutes, totalVideoMinutes and
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
      });
    } finally {
      await service.close();
    }
  });
});
