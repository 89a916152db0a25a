import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY } from '../helpers/harness.js';

interface StatusJson {
  healthy: boolean;
  apps: { app_id: string; last_run_status: string | null }[];
}

/**
 * A backfill (`sync --since … --until …`) reads one window: ending ok, it proves nothing about the
 * rest. Judged as the app's last run, it cleared the export's stale mark and made status healthy
 * after a failed sync, with calls since then missing (probe round 16 a, F3).
 */
describe('after a failed sync, a backfill that ends ok leaves the app stale and unhealthy, and the report says so', () => {
  test.override({ simApps: [{ calls: 120 }] });

  it('status exit 1 naming the failed sync; the export marks the app stale=1; the report says so', async ({ sim, writeConfig, database, dir }) => {
    const env = { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' };
    const cfg = writeConfig({ maxAttempts: 1 });
    expect((await runCli(['sync', '--config', cfg], env)).code).toBe(0);
    const month = (await runCli(['query', '--config', cfg, '--format', 'json', 'select max(started_month) as m from calls'], env)).stdout;
    const m = (JSON.parse(month) as { m: string }[])[0]!.m;

    sim.setFaults({ http5xxRate: 1 });
    expect((await runCli(['sync', '--config', cfg], env)).code).toBe(1);
    sim.setFaults({});
    const backfill = await runCli(['sync', '--config', cfg, '--since', `${m}-01`, '--until', `${m}-02`], env);
    expect(backfill.code, backfill.stderr).toBe(0);

    const status = await runCli(['status', '--config', cfg, '--format', 'json'], env);
    expect(status.code, status.stdout).toBe(1);
    expect((JSON.parse(status.stdout) as StatusJson).apps.map((a) => [a.app_id, a.last_run_status])).toEqual([['app1', 'failed']]);
    const exported = await runCli(['export', 'billing', '--database', database, '--month', m, '--format', 'json'], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect((JSON.parse(exported.stdout) as { stale: number }[]).every((r) => r.stale === 1)).toBe(true);
    expect(exported.stderr).toMatch(/app1 \(us\) is stale, its rows are marked stale=1: its last sync \(started [^)]+\): failed/);

    // The report says so too, on the page and on stderr (it said nothing: probe round 16 a, F4).
    const page = join(dir, 'report.html');
    const report = await runCli(['report', '--database', database, '--month', m, '--out', page], env);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).toMatch(/^callsync: warning: app app1 \(us\): its figures may be incomplete, its last sync \(started [^)]+\): failed$/m);
    const text = readFileSync(page, 'utf8');
    expect(text).toContain('<h2>Read first</h2>');
    expect(text).toMatch(/<li>app app1 \(us\): its figures may be incomplete, its last sync \(started [^)]+\): failed<\/li>/);
  }, 60_000);

  // Probe round 17 (a, 6): with backfills set aside, an app that ran nothing else had no last run: healthy.
  it('an app whose only run is a failed backfill: that is its last run, status exit 1', async ({ sim, writeConfig }) => {
    const env = { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' };
    const cfg = writeConfig({ maxAttempts: 1 }, 'only-backfill.json');
    sim.setFaults({ http5xxRate: 1 });
    expect((await runCli(['sync', '--config', cfg, '--since', '2025-11-01', '--until', '2025-11-02'], env)).code).toBe(1);
    const status = await runCli(['status', '--config', cfg, '--format', 'json'], env);
    expect(status.code, status.stdout).toBe(1);
    expect((JSON.parse(status.stdout) as StatusJson).apps.map((a) => [a.app_id, a.last_run_status])).toEqual([['app1', 'failed']]);
  }, 60_000);
});
