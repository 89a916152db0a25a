import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, syncWith, tempDir } from '../helpers/harness.js';
import { resolvePeriod, type Period } from '../../src/export/period.js';
import type { FakeCall } from './support/fake-calls-service.js';
import { minutesOf, startFinanceService } from './support/finance-calls.js';
import { settingsAt } from './support/matrix.js';

/**
 * The nightly export writes the previous month in `schedule.timezone`; `export billing`, `report`
 * and `reconcile` typed by hand read their period in UTC, so one config gave two Octobers (the
 * finance fake's Berlin October holds other calls than its UTC one), and reconcile could not be
 * asked for a month in a zone at all. Now the zone defaults to the config's `schedule.timezone`,
 * reconcile takes `--month` and `--timezone`, states its window, and names the apps whose calls may
 * be fewer than the service's, as the export does.
 */
const tmp = tempDir('period-zone-');
afterAll(() => tmp.cleanup());

interface BillingJson { row_kind: string; timezone: string; calls: number; user_minutes: number }
interface ReconcileJson { summary: Record<string, unknown>[]; window: { label: string; timezone: string; from: string | null; to: string | null } | null }
const r4 = (n: number): number => Math.round(n * 1e4) / 1e4;

/** The calls the service holds that start in the period, and their minutes (the flagged call's apart, as every export keeps them). */
function truth(calls: readonly FakeCall[], period: Period, flagged: FakeCall): { calls: number; minutes: number } {
  const inIt = calls.filter((c) => c.startedAt !== undefined && c.startedAt >= period.start && c.startedAt < period.end);
  return { calls: inIt.length, minutes: r4(inIt.filter((c) => c !== flagged).reduce((s, c) => s + minutesOf(c), 0)) };
}

describe('a period is read in schedule.timezone unless --timezone says otherwise', () => {
  it('export, report and reconcile of October agree with the Berlin truth, and reconcile says its window and the stale app', async () => {
    const { service, flagged } = await startFinanceService();
    try {
      const db = join(tmp.dir, 'zone.db');
      expect((await syncWith(settingsAt(service.baseUrls(), db, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      const config = join(tmp.dir, 'zone.config.json');
      writeFileSync(config, JSON.stringify({
        database: db,
        apps: [
          { appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, ...service.baseUrls() },
          // Configured, never synced: its calls are not in the database.
          { appId: 'app2', region: 'us', apiKeyEnv: KEY_ENV, ...service.baseUrls() },
        ],
        schedule: { timezone: 'Europe/Berlin' },
      }));
      const berlin = resolvePeriod({ month: '2026-10', timezone: 'Europe/Berlin' });
      const utc = resolvePeriod({ month: '2026-10', timezone: 'UTC' });
      const want = { berlin: truth(service.calls, berlin, flagged), utc: truth(service.calls, utc, flagged) };
      // The fake's October differs between the two zones (else this test could not fail).
      expect(want.berlin.minutes).not.toBe(want.utc.minutes);

      const total = (stdout: string): { calls: number; minutes: number; timezone: string } => {
        const t = (JSON.parse(stdout) as BillingJson[]).find((r) => r.row_kind === 'total' && r.calls > 0)!;
        return { calls: t.calls, minutes: r4(t.user_minutes), timezone: t.timezone };
      };
      const exported = await runCli(['export', 'billing', '--config', config, '--month', '2026-10', '--format', 'json']);
      expect(exported.code, exported.stderr).toBe(0);
      expect(total(exported.stdout)).toEqual({ ...want.berlin, timezone: 'Europe/Berlin' });
      const exportedUtc = await runCli(['export', 'billing', '--config', config, '--month', '2026-10', '--timezone', 'UTC', '--format', 'json']);
      expect(total(exportedUtc.stdout)).toEqual({ ...want.utc, timezone: 'UTC' });
      // Without a config file, UTC as before (run in a folder without callsync.config.json).
      const bare = await runCli(['export', 'billing', '--database', db, '--month', '2026-10', '--format', 'json'], {}, tmp.dir);
      expect(total(bare.stdout)).toEqual({ ...want.utc, timezone: 'UTC' });

      const report = await runCli(['report', '--config', config, '--month', '2026-10', '--out', join(tmp.dir, 'r.html')]);
      expect(report.code, report.stderr).toBe(0);
      expect(report.stdout).toMatch(new RegExp(`report 2026-10 \\(Europe/Berlin\\), \\d app\\(s\\), ${want.berlin.calls} calls`));

      const reconciled = async (args: string[]): Promise<{ calls: number; minutes: number; json: ReconcileJson; stderr: string }> => {
        const r = await runCli(['reconcile', '--config', config, ...args, '--format', 'json']);
        expect(r.code, r.stderr).toBe(0);
        const json = JSON.parse(r.stdout) as ReconcileJson;
        const sum = (k: string): number => json.summary.reduce((s, row) => s + Number(row[k]), 0);
        return { calls: sum('calls'), minutes: r4(sum('user_minutes')), json, stderr: r.stderr };
      };
      for (const args of [['--month', '2026-10'], ['--from', '2026-10-01', '--to', '2026-11-01'], ['--from', '2026-10-01T00:00', '--to', '2026-11-01 00:00:00']]) {
        const r = await reconciled(args);
        expect({ calls: r.calls, minutes: r.minutes }, args.join(' ')).toEqual(want.berlin);
        expect(r.json.window, args.join(' ')).toMatchObject({ timezone: 'Europe/Berlin', from: '2026-09-30T22:00:00Z', to: '2026-10-31T23:00:00Z' });
        expect(r.stderr, args.join(' ')).toMatch(/app2 \(us\) may hold fewer calls than the service: never synced/);
        expect(r.stderr, args.join(' ')).not.toMatch(/app1 \(us\) may hold/);
      }
      const rUtc = await reconciled(['--month', '2026-10', '--timezone', 'UTC']);
      expect({ calls: rUtc.calls, minutes: rUtc.minutes }).toEqual(want.utc);
      // Unix seconds and offsets are what they say, whatever the zone.
      const rUnix = await reconciled(['--from', String(utc.start), '--to', '2026-11-01T00:00:00Z']);
      expect({ calls: rUnix.calls, minutes: rUnix.minutes }).toEqual(want.utc);

      // The table states the window, the month in its zone and in UTC.
      const table = await runCli(['reconcile', '--config', config, '--month', '2026-10']);
      expect(table.stdout).toContain('calls started in 2026-10 (Europe/Berlin: 2026-09-30T22:00:00Z..2026-10-31T23:00:00Z)');
      const both = await runCli(['reconcile', '--config', config, '--month', '2026-10', '--from', '2026-10-01']);
      expect([both.code, both.stderr.trim().split('\n').length]).toEqual([2, 1]);
      expect(both.stderr).toMatch(/either --month or --from\/--to/);
    } finally {
      await service.close();
    }
  }, 90_000);
});
