import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY } from '../helpers/harness.js';

/**
 * An app in the config that never synced had no row in the export and no word in the report: it
 * read as an app without calls (probe round 17 a, 5).
 */
describe('a configured app that never synced is named stale by export and report', () => {
  test.override({ simApps: [{ calls: 80 }, { calls: 80 }] });

  it('export: a total row of zeros marked stale=1 and a line; report: in the Read first box', async ({ writeConfig, dir }) => {
    const env = { [KEY_ENV]: TEST_KEY };
    const one = writeConfig({}, 'one.json', ['app1']);
    expect((await runCli(['sync', '--config', one], env)).code).toBe(0);
    const both = writeConfig({}, 'both.json', ['app1', 'app2']);
    const m = (JSON.parse((await runCli(['query', '--config', both, '--format', 'json', 'select max(started_month) as m from calls'], env)).stdout) as { m: string }[])[0]!.m;

    const exported = await runCli(['export', 'billing', '--config', both, '--month', m, '--format', 'json'], env);
    expect(exported.code, exported.stderr).toBe(0);
    const rows = JSON.parse(exported.stdout) as { app_id: string; row_kind: string; calls: number; stale: number }[];
    expect(rows.filter((r) => r.app_id === 'app2')).toEqual([expect.objectContaining({ row_kind: 'total', calls: 0, stale: 1 })]);
    expect(rows.filter((r) => r.app_id === 'app1').every((r) => r.stale === 0)).toBe(true);
    expect(exported.stderr).toMatch(/^callsync: warning: app2 \(us\) is stale, its rows are marked stale=1: never synced$/m);

    const page = join(dir, 'r.html');
    const report = await runCli(['report', '--config', both, '--month', m, '--out', page], env);
    expect(report.code, report.stderr).toBe(0);
    expect(readFileSync(page, 'utf8')).toContain('<li>app app2 (us): its figures may be incomplete, never synced</li>');
  }, 60_000);
});
