import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePeriod, type Period } from '../../src/export/period.js';
import { collectReportData } from '../../src/report/collect-report-data.js';
import { periodDays } from '../../src/report/period-days.js';
import type { ReportData } from '../../src/report/report-data.js';
import { renderReportHtml } from '../../src/report/render-html.js';
import type { Simulator } from '../../src/simulator/index.js';
import { openSqliteStore } from '../../src/store/connection.js';
import { runCli } from '../helpers/cli.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';

/** Formats like the report, written out again here so the test does not trust the report's formatter. */
const twoDecimalsGrouped = (n: number): string => n.toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** What the service bills, straight from the participant rows: no view, no aggregate column. */
async function participantMinutes(dbPath: string, period: Period, appId: string): Promise<number> {
  return withStore(dbPath, async (s) => {
    const r = await sql<{ minutes: number }>`
      select sum(p.total_duration_minutes) as minutes
      from call_participants p join calls c on c.app_id = p.app_id and c.session_id = p.session_id
      where c.app_id = ${appId} and c.started_at >= ${period.start} and c.started_at < ${period.end}`.execute(s.db);
    return Number(r.rows[0]?.minutes ?? 0);
  });
}

async function renderFromFile(dbPath: string, period: Period): Promise<{ data: ReportData; page: string }> {
  const store = openSqliteStore(dbPath, { readonly: true });
  try {
    const data = await collectReportData(store.db, period, { databasePath: resolve(dbPath) });
    return { data, page: renderReportHtml(data) };
  } finally {
    await store.close();
  }
}

function expectSelfContained(page: string): void {
  expect(page).not.toMatch(/\b(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
  expect(page).not.toMatch(/https?:\/\//i);
  expect(page).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
}

describe('the monthly HTML report', () => {
  let sim: Simulator;
  const tmp = tempDir();
  const dbPath = join(tmp.dir, 'calls.db');
  const november = resolvePeriod({ month: '2025-11' });

  beforeAll(async () => {
    sim = await startTestSim([{ calls: 3000 }]);
    const summary = await syncWith(testSettings(sim, ['app1'], dbPath));
    expect(summary.ok).toBe(true);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('is one self-contained page with charts, whose billed total is the sum of participant minutes', async () => {
    const { data, page } = await renderFromFile(dbPath, november);
    expectSelfContained(page);
    expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(page.match(/<svg/g)?.length).toBe(2);
    const expected = await participantMinutes(dbPath, november, 'app1');
    expect(expected).toBeGreaterThan(0);
    const totalRow = /<tr class="total">([\s\S]*?)<\/tr>/.exec(page)?.[1] ?? '';
    expect(totalRow).toContain('<td>app1</td>');
    expect(totalRow).toContain(`<td class="num">${twoDecimalsGrouped(expected)}</td>`);
    // The sections a finance reader looks for, with content rather than their empty-state line.
    expect(data.topUsers).toHaveLength(10);
    expect(data.topGroups.length).toBeGreaterThan(0);
    expect(data.mismatches.length).toBeGreaterThan(0);
    expect(data.mismatches.length).toBeLessThanOrEqual(20);
    for (const heading of ['Billing totals', 'Daily user-minutes by call type', 'Reconciliation', 'Largest mismatches', 'Top 10 users', 'groups']) {
      expect(page).toContain(heading);
    }
  });

  it('puts every minute of the period on exactly one day, in UTC and in a local time zone', async () => {
    const periods = [november, resolvePeriod({ month: '2025-11', timezone: 'America/New_York' }), resolvePeriod({ from: '2025-10-20', to: '2025-11-10', timezone: 'Asia/Kolkata' })];
    for (const period of periods) {
      const { data } = await renderFromFile(dbPath, period);
      expect(data.daily.basis).toBe(period.timezone === 'UTC' ? 'utc' : 'local');
      expect(data.daily.days).toEqual(periodDays(period).map((d) => d.day));
      const chart = data.daily.points.reduce((s, p) => s + p.userMinutes, 0);
      const billed = await participantMinutes(dbPath, period, 'app1');
      expect(chart).toBeCloseTo(billed, 6);
    }
    // New York leaves daylight saving time on 2025-11-02: that local day has 25 hours.
    const ny = periodDays(resolvePeriod({ month: '2025-11', timezone: 'America/New_York' }));
    expect(ny.map((d) => (d.end - d.start) / 3600).slice(0, 3)).toEqual([24, 25, 24]);
  });

  it('escapes hostile text from the database everywhere it is shown', async () => {
    const { data } = await renderFromFile(dbPath, november);
    const hostile = '<script>alert(1)</script>';
    const firstUser = data.topUsers[0];
    const firstGroup = data.topGroups[0];
    const firstMismatch = data.mismatches[0];
    if (!firstUser || !firstGroup || !firstMismatch) throw new Error('the dataset has no users, groups or mismatches');
    const tampered: ReportData = {
      ...data,
      databasePath: `/tmp/"a&b"/${hostile}.db`,
      apps: data.apps.map((a) => ({ ...a, appId: `${a.appId}${hostile}` })),
      topUsers: [{ ...firstUser, uid: hostile, name: 'Tom & "Jerry" <tj>' }],
      topGroups: [{ ...firstGroup, guid: `g'"><img src=x onerror=alert(1)>` }],
      mismatches: [{ ...firstMismatch, sessionId: hostile, issues: ['<b>bold</b>', 'totals_ne_participants'] }],
      daily: { ...data.daily, types: [...data.daily.types, '<i>type</i>'], points: [...data.daily.points, { day: data.daily.days[0] ?? '', type: '<i>type</i>', calls: 1, userMinutes: 5 }] },
    };
    const page = renderReportHtml(tampered);
    expect(page).not.toContain(hostile);
    expect(page).not.toMatch(/<img|<b>bold|<i>type/);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('Tom &amp; &quot;Jerry&quot; &lt;tj&gt;');
    expect(page).toContain('g&#39;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(page).toContain('&lt;i&gt;type&lt;/i&gt;');
    expectSelfContained(page);
  });

  it('gives the same bytes for the same database, from the real CLI as in process', async () => {
    const out1 = join(tmp.dir, 'r.html');
    const out2 = join(tmp.dir, 'again', 'r.html');
    const first = await runCli(['report', '--database', dbPath, '--month', '2025-11', '--out', out1]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/report 2025-11 \(UTC\), 1 app\(s\), \d+ calls/);
    const second = await runCli(['report', '--database', dbPath, '--month', '2025-11', '--out', out2]);
    expect(second.code).toBe(0);
    const a = readFileSync(out1);
    expect(a.equals(readFileSync(out2))).toBe(true);
    expect(a.toString('utf8')).toBe((await renderFromFile(dbPath, november)).page);
    expectSelfContained(a.toString('utf8'));
  });

  it('rejects a missing period or an unknown app in one line with exit 2', async () => {
    const noPeriod = await runCli(['report', '--database', dbPath, '--out', join(tmp.dir, 'x.html')]);
    expect(noPeriod.code).toBe(2);
    expect(noPeriod.stderr.trim().split('\n')).toHaveLength(1);
    expect(noPeriod.stderr).toContain('--month');
    const unknownApp = await runCli(['report', '--database', dbPath, '--month', '2025-11', '--app', 'nope', '--out', join(tmp.dir, 'x.html')]);
    expect(unknownApp.code).toBe(2);
    expect(unknownApp.stderr).toContain('--app nope');
    expect(unknownApp.stderr).toContain('app1');
  });
});
