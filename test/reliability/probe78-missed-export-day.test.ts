import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/config/clock.js';
import { resolveConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { runScheduledTick, type TickResult } from '../../src/schedule/scheduled-tick.js';
import { openStore } from '../../src/store/connection.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, TEST_KEY, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { startFinanceService, T } from './support/finance-calls.js';

/**
 * probe78 F1: the monthly export is written by the tick of `schedule.exportDayOfMonth` only. When
 * no tick ran that day (the process down, the machine asleep, the tick skipped because a sync by hand
 * held the database, or a cron time that did not exist that night), the month was never written and
 * nothing said so: not the next tick, not `status`. Now the next tick writes every month due since
 * the last one written (the same file `export billing --month … --timezone …` gives), and `status`
 * names a month still unwritten a day after its first tick.
 */
const tmp = tempDir('probe78-missed-');
afterAll(() => tmp.cleanup());
const ENV = { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' };
const TZ = 'Europe/Berlin';

function configJson(urls: { callsBaseUrl: string; chatBaseUrl: string }, database: string, exportDir: string): Record<string, unknown> {
  return {
    database,
    apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...urls }],
    requestTimeoutMs: 2_000,
    liveMaxDays: 3650,
    schedule: { cron: '0 2 * * *', timezone: TZ, exportDayOfMonth: 1, exportDir, exportFormat: 'csv', reconcile: false },
  };
}

/** One tick of `callsync schedule` as it runs at `iso` (the clock moves on from there as real time does). */
async function tickAt(cfg: Record<string, unknown>, iso: string): Promise<TickResult> {
  const settings = resolveConfig(cfg, ENV);
  const at = Date.parse(iso);
  const started = Date.now();
  const clock: Clock = { ...systemClock, now: () => at + (Date.now() - started) };
  const store = await openStore(settings.database);
  const dispatcher = new Agent({ keepAliveTimeout: 5_000 });
  try {
    return await runScheduledTick({ db: store.db, dispatcher, clock, log: silentLogger }, settings);
  } finally {
    await dispatcher.close();
    await store.close();
  }
}

describe('a night without the export day\'s tick', () => {
  it('the next tick writes the month it missed, the same file `export billing --month --timezone` gives; status names it', async () => {
    const { service } = await startFinanceService();
    try {
      const db = join(tmp.dir, 'late.db');
      const dir = join(tmp.dir, 'late-exports');
      const cfg = configJson(service.baseUrls(), db, dir);
      const cfgPath = join(tmp.dir, 'late.json');
      writeFileSync(cfgPath, JSON.stringify(cfg));
      // 02:00 in Berlin on November 29: the schedule runs, not an export day.
      const first = await tickAt(cfg, '2026-11-29T01:00:00Z');
      expect(first.skipped ? first.reason : first.summary.results[0]!.status).toBe('ok');
      expect(existsSync(join(dir, 'billing-2026-11.csv'))).toBe(false);
      // The machine is off on December 1 (the export day); it is back for the tick of December 2.
      const late = await tickAt(cfg, '2026-12-02T01:00:00Z');
      if (late.skipped) throw new Error(late.reason);
      const file = join(dir, 'billing-2026-11.csv');
      expect(existsSync(file), 'the export of November, due on December 1, was never written').toBe(true);
      expect(late.exports?.map((e) => [e.month, e.late])).toEqual([['2026-11', true]]);
      // November in Berlin: the call of October 31 23:50 UTC (00:50 on November 1 there) and the one of November 3.
      const rows = parse(readFileSync(file, 'utf8'), { columns: true }) as Record<string, string>[];
      expect(rows.find((r) => r.row_kind === 'total')?.calls).toBe(String(service.calls.filter((c) => c.startedAt! >= T('2026-10-31T23:00:00Z') && c.startedAt! < T('2026-11-30T23:00:00Z')).length));
      const manual = await runCli(['export', 'billing', '--config', cfgPath, '--month', '2026-11', '--timezone', TZ], ENV);
      expect(manual.code, manual.stderr).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(manual.stdout);
      // A tick the same day writes nothing again; the export day's own ticks still rewrite their month.
      const again = await tickAt(cfg, '2026-12-02T13:00:00Z');
      expect(again.skipped ? again.reason : again.exports).toBeUndefined();

      const status = await runCli(['status', '--config', cfgPath], ENV);
      expect(status.stdout).toMatch(/^scheduled billing export: \S+billing-2026-11\.csv \(2026-11\) written at 2026-12-02T01:00:\d\dZ$/m);
    } finally {
      await service.close();
    }
  }, 30_000);

  it('status says an export no tick wrote, and exits 1, until a tick writes it', async () => {
    const service = await FakeCallsService.start({ calls: 0, ongoing: 0 });
    try {
      const db = join(tmp.dir, 'overdue.db');
      const dir = join(tmp.dir, 'overdue-exports');
      const cfg = configJson(service.baseUrls(), db, dir);
      const cfgPath = join(tmp.dir, 'overdue.json');
      writeFileSync(cfgPath, JSON.stringify(cfg));
      // The schedule's one tick, on August 20; it has not run since (these tests run after November 2026).
      const only = await tickAt(cfg, '2026-08-20T00:00:00Z');
      expect(only.skipped ? only.reason : only.summary.ok).toBe(true);
      const before = await runCli(['status', '--config', cfgPath], ENV);
      expect(before.stdout).toMatch(/^SCHEDULED EXPORT OVERDUE: billing 2026-08 fell due at 2026-08-31T22:00:00Z and no tick has written it .*`callsync export billing --month 2026-08 --timezone Europe\/Berlin` gives it now \(`schedule.exportDayOfMonth: 0` turns the monthly export off\)$/m);
      expect(before.stdout).toMatch(/^SCHEDULED EXPORT OVERDUE: billing 2026-10 fell due at 2026-10-31T23:00:00Z/m);
      expect(before.stdout).toMatch(/^UNHEALTHY$/m);
      expect(before.code).toBe(1);
      const json = JSON.parse((await runCli(['status', '--config', cfgPath, '--format', 'json'], ENV)).stdout) as { healthy: boolean; scheduledExport: { overdue: { month: string }[] } };
      expect(json.healthy).toBe(false);
      expect(json.scheduledExport.overdue.map((o) => o.month).slice(0, 3)).toEqual(['2026-08', '2026-09', '2026-10']);

      // The schedule runs again (now): it writes every month it owed.
      const tick = await runCli(['schedule', '--config', cfgPath, '--run-now', '--quiet'], ENV);
      expect(tick.code, tick.stderr).toBe(0);
      expect(tick.stderr).toMatch(/^billing export written: \S+billing-2026-08\.csv \(late: no tick wrote 2026-08 on its export day\)$/m);
      for (const m of ['2026-08', '2026-09', '2026-10']) expect(existsSync(join(dir, `billing-${m}.csv`)), m).toBe(true);
      const after = await runCli(['status', '--config', cfgPath], ENV);
      expect(after.stdout).not.toMatch(/OVERDUE/);
      expect(after.code, after.stdout).toBe(0);
    } finally {
      await service.close();
    }
  }, 30_000);
});
