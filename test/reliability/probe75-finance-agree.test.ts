import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { testDialects, databaseFactory, pgExec } from '../helpers/databases.js';
import { runCli } from '../helpers/cli.js';
import { syncWith, tempDir } from '../helpers/harness.js';
import { resolvePeriod, type Period } from '../../src/export/period.js';
import type { FakeCall } from './support/fake-calls-service.js';
import { minutesOf, startFinanceService, T } from './support/finance-calls.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe75: for one month and one day, in UTC and in Europe/Berlin (the DST change of 2026-10-25
 * inside both), the billing export, reconcile's summary, the HTML report and the views read with
 * `callsync query` agree with each other and with the calls the service holds; where one leaves
 * minutes out (flagged minutes, a call without a start time), it says so itself.
 */
const dialects = await testDialects();
const tmp = tempDir('probe75-agree-');
afterAll(() => tmp.cleanup());

const r4 = (n: number): number => Math.round(n * 1e4) / 1e4;
type Json = Record<string, unknown>;
interface BillingJson { type: string; row_kind: string; calls: number; user_minutes: number; flagged_calls: number; flagged_user_minutes: number }

/** What the service's calls say for a period: calls started in it per type, their minutes, the flagged call apart. */
function truth(calls: readonly FakeCall[], period: Period, flagged: FakeCall) {
  const inPeriod = calls.filter((c) => c.startedAt !== undefined && c.startedAt >= period.start && c.startedAt < period.end);
  const byType = new Map<string, { calls: number; minutes: number }>();
  for (const c of inPeriod) {
    const t = byType.get(c.type as string) ?? { calls: 0, minutes: 0 };
    t.calls++;
    if (c !== flagged) t.minutes += minutesOf(c);
    byType.set(c.type as string, t);
  }
  const flaggedIn = inPeriod.includes(flagged);
  return { calls: inPeriod.length, minutes: [...byType.values()].reduce((s, t) => s + t.minutes, 0), byType, flaggedCalls: flaggedIn ? 1 : 0, flaggedMinutes: flaggedIn ? minutesOf(flagged) : 0 };
}

describe.each(dialects)('finance outputs agree for one period, and say what they leave out [%s]', (dialect) => {
  const dbs = databaseFactory(dialect, tmp.dir);
  afterAll(() => dbs.dropAll());

  it('month and DST day, UTC and Europe/Berlin: export, reconcile, report and views hold the same minutes', async () => {
    const { service, flagged, unplaced } = await startFinanceService();
    try {
      const db = await dbs.fresh('agree');
      expect((await syncWith(settingsAt(service.baseUrls(), db, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      const cases = [
        { tz: 'UTC', args: ['--month', '2026-10'] },
        { tz: 'Europe/Berlin', args: ['--month', '2026-10'] },
        { tz: 'UTC', args: ['--from', '2026-10-25', '--to', '2026-10-26'] },
        { tz: 'Europe/Berlin', args: ['--from', '2026-10-25', '--to', '2026-10-26'] },
      ];
      // On PostgreSQL, query refuses a superuser (the test server's admin): a role that may only read.
      let readable = db;
      if (dialect === 'postgres') {
        const role = `cs_probe75_reader_${Math.random().toString(16).slice(2, 10)}`;
        await pgExec(db, `create role ${role} login in role pg_read_all_data`);
        onTestFinished(() => pgExec(db, `drop role if exists ${role}`));
        const u = new URL(db);
        u.username = role;
        readable = u.toString();
      }
      for (const { tz, args } of cases) {
        const label = `${tz} ${args.join(' ')}`;
        const period = resolvePeriod({ ...(args[0] === '--month' ? { month: args[1] } : { from: args[1], to: args[3] }), timezone: tz });
        const want = truth(service.calls, period, flagged);
        const unplacedIn = unplaced.initiatedAt >= period.start && unplaced.initiatedAt < period.end;

        // The billing export, per type and in total, against the calls the service holds.
        const exp = await runCli(['export', 'billing', '--database', db, ...args, '--timezone', tz, '--format', 'json']);
        expect(exp.code, `${label}: ${exp.stderr}`).toBe(0);
        const rows = JSON.parse(exp.stdout) as BillingJson[];
        const total = rows.find((r) => r.row_kind === 'total')!;
        expect({ calls: total.calls, minutes: r4(total.user_minutes), flagged: total.flagged_calls, flaggedMinutes: r4(total.flagged_user_minutes) }, label).toEqual({
          calls: want.calls, minutes: r4(want.minutes), flagged: want.flaggedCalls, flaggedMinutes: r4(want.flaggedMinutes),
        });
        for (const r of rows.filter((x) => x.row_kind === 'type')) expect([r.type, r.calls, r4(r.user_minutes)], label).toEqual([r.type, want.byType.get(r.type)?.calls, r4(want.byType.get(r.type)?.minutes ?? NaN)]);
        const said = /call\(s\) initiated in \S+ hold ([\d.]+) user-minutes but no start time/;
        expect(said.exec(exp.stderr)?.[1], `${label}: ${exp.stderr}`).toBe(unplacedIn ? String(r4(minutesOf(unplaced))) : undefined);

        // reconcile over the same window (its bounds as unix seconds: it has no --timezone).
        const rec = await runCli(['reconcile', '--database', db, '--from', String(period.start), '--to', String(period.end), '--format', 'json']);
        expect(rec.code, `${label}: ${rec.stderr}`).toBe(0);
        const report = JSON.parse(rec.stdout) as { summary: Json[]; flaggedCalls: number; flaggedUserMinutes: number };
        const sum = (k: string): number => report.summary.reduce((s, r) => s + Number(r[k]), 0);
        expect({ calls: sum('calls'), minutes: r4(sum('user_minutes')), flagged: report.flaggedCalls, flaggedMinutes: r4(report.flaggedUserMinutes) }, label).toEqual({
          calls: want.calls, minutes: r4(want.minutes), flagged: want.flaggedCalls, flaggedMinutes: r4(want.flaggedMinutes),
        });
        // The minutes the window leaves out are said, as the export says them.
        expect(said.exec(rec.stderr)?.[1], `${label}: reconcile stderr: ${rec.stderr}`).toBe(unplacedIn ? String(r4(minutesOf(unplaced))) : undefined);

        // The report: its cards and its notices.
        const page = join(tmp.dir, `${dialect}-${label.replace(/\W+/g, '_')}.html`);
        const rep = await runCli(['report', '--database', db, ...args, '--timezone', tz, '--out', page]);
        expect(rep.code, `${label}: ${rep.stderr}`).toBe(0);
        const html = readFileSync(page, 'utf8');
        const cardValue = (name: string): string | undefined => new RegExp(`<div class="label">${name.replace(/[()]/g, '\\$&')}</div><div class="value">([^<]*)</div>`).exec(html)?.[1];
        expect([cardValue('Calls'), cardValue('User-minutes (billed)')], label).toEqual([String(want.calls), want.minutes.toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')]);
        expect(said.test(html), label).toBe(unplacedIn);

        // The views (UTC periods only: their month and day are UTC texts). They include the
        // flagged minutes, as docs/schema.md says: user_minutes + flagged_user_minutes.
        if (tz === 'UTC') {
          const where = args[0] === '--month' ? `month = '${args[1]}'` : `day = '${args[1]}'`;
          const q = await runCli(['query', '--database', readable, '--format', 'json', `select sum(calls) as calls, sum(user_minutes) as minutes from daily_usage where ${where}`]);
          expect(q.code, q.stderr).toBe(0);
          const [daily] = JSON.parse(q.stdout) as { calls: number | string; minutes: number | string }[];
          expect([Number(daily!.calls), r4(Number(daily!.minutes))], label).toEqual([want.calls, r4(want.minutes + want.flaggedMinutes)]);
          if (args[0] === '--month') {
            const u = await runCli(['query', '--database', readable, '--format', 'json', `select sum(total_minutes) as minutes from user_usage where month = '${args[1]}'`]);
            expect(r4(Number((JSON.parse(u.stdout) as { minutes: number | string }[])[0]!.minutes)), label).toBe(r4(want.minutes + want.flaggedMinutes));
            // Per user: user_usage against every participant's minutes in the month's calls.
            const perUser = await runCli(['query', '--database', readable, '--format', 'json', `select uid, total_minutes from user_usage where month = '${args[1]}' order by uid`]);
            const byUid = new Map<string, number>();
            for (const c of service.calls) {
              if (c.startedAt === undefined || c.startedAt < period.start || c.startedAt >= period.end) continue;
              for (const p of c.participants) byUid.set(p.uid, (byUid.get(p.uid) ?? 0) + p.totalDuration);
            }
            const got = (JSON.parse(perUser.stdout) as { uid: string; total_minutes: number | string }[]).map((r) => [r.uid, r4(Number(r.total_minutes))]);
            expect(got, label).toEqual([...byUid.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([uid, m]) => [uid, r4(m)]));
          }
        }
      }
      // Sanity: the placed calls fall where the periods cut them.
      expect(T('2026-10-25T23:00:00Z')).toBe(resolvePeriod({ from: '2026-10-26', to: '2026-10-27', timezone: 'Europe/Berlin' }).start);
    } finally {
      await service.close();
    }
  }, 120_000);
});
