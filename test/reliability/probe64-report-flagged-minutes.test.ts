import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolvePeriod } from '../../src/export/period.js';
import { collectReportData } from '../../src/report/collect-report-data.js';
import { renderReportHtml } from '../../src/report/render-html.js';
import { tempDir, withStore } from '../helpers/harness.js';
import { ABSURD, syncedWithInflatedCall } from './support/inflated-call.js';

/**
 * probe64 F2: calls whose minutes are implausible (`flagged`: negative, far beyond the wall clock,
 * over 24 h) are "kept and flagged, never summed silently" (README): the billing export and the
 * report's billing table leave their minutes out, and the report says "their N user-minutes are
 * not in the totals above". Yet the same page's daily chart, top users and top groups summed them
 * in with nothing said: one participant stated with 50,000 minutes on a five-minute call made that
 * user the top user of the month with 50,000 minutes, and the day's bar 50,000 minutes high, while
 * the billed total (same page) had none of them. A finance reader reads either figure as the month's.
 * Each figure of the page should cover the same minutes as the billed total (or say it does not).
 */
const SEED = 21;
const tmp = tempDir('probe64-flagged-');
afterAll(() => tmp.cleanup());

describe('the report does not sum flagged minutes into its chart and rankings', () => {
  it("daily chart, reconciliation table, top users and top groups cover the billed (unflagged) minutes only", async () => {
    const db = join(tmp.dir, 'flagged.db');
    const { service, call } = await syncedWithInflatedCall(SEED, db, (ended) => ended.find((c) => c.receiverType === 'group') ?? ended[0]!);
    const target = call.sessionId;
    try {
      const month = new Date(call.startedAt! * 1000).toISOString().slice(0, 7);
      const period = resolvePeriod({ month });
      await withStore(db, async ({ db: k }) => {
        const flagged = await k.selectFrom('call_figures').select(['session_id', 'flagged']).where('flagged', '=', 1).execute();
        expect(flagged.map((f) => f.session_id)).toEqual([target]);
        const data = await collectReportData(k, period, { databasePath: db });
        const total = data.billing.find((r) => r.row_kind === 'total')!;
        expect(total.flagged_calls).toBe(1);
        expect(total.flagged_user_minutes).toBeGreaterThanOrEqual(ABSURD);
        // The chart: its bars add up to the billed user-minutes, not to them plus the flagged call's.
        const charted = data.daily.points.reduce((n, p) => n + p.userMinutes, 0);
        expect(charted).toBeCloseTo(total.user_minutes, 6);
        // The reconciliation table's user-minutes per relation add up to the billed ones too.
        expect(data.relations.reduce((n, r) => n + r.userMinutes, 0)).toBeCloseTo(total.user_minutes, 6);
        // The rankings: no user or group is credited with the flagged call's minutes.
        for (const u of data.topUsers) expect(u.userMinutes, `top user ${u.uid}`).toBeLessThan(ABSURD);
        for (const g of data.topGroups) expect(g.userMinutes, `top group ${g.guid}`).toBeLessThan(ABSURD);
        // And the page shows no figure of that size outside the notes that name the flagged minutes
        // and the list of calls to review (which names the call with its own figures, as it should).
        const page = renderReportHtml(data).replace(/<p class="note">[\s\S]*?<\/p>/g, '').replace(/<h3>Largest mismatches<\/h3>[\s\S]*?<\/table>/, '');
        const big = [...page.matchAll(/\b(5\d,\d{3}\.\d\d)\b/g)].map((m) => m[1]);
        expect(big, `figures of ${ABSURD} minutes on the page`).toEqual([]);
      });
    } finally {
      await service.close();
    }
  });
});
