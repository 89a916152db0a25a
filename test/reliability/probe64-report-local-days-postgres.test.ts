import { afterAll, describe, expect, it } from 'vitest';
import { resolvePeriod } from '../../src/export/period.js';
import { collectReportData } from '../../src/report/collect-report-data.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { KEY_ENV, syncWith, tempDir, TEST_KEY, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * probe64 F3: `callsync report --timezone <zone other than UTC>` on PostgreSQL stopped with
 * "unexpected error: operator does not exist: bigint >= text" (exit 1, no report): the daily chart's
 * local days are a VALUES list whose bounds are bound parameters, which PostgreSQL types as text,
 * then compares with calls.started_at (bigint). SQLite compares them as numbers, so only
 * PostgreSQL users (the several-workers set-up the README recommends) lost every local-time report.
 */
const tmp = tempDir('probe64-localpg-');
const dialects = await testDialects();
const dbs = databaseFactory('postgres', tmp.dir);
afterAll(async () => {
  await dbs.dropAll();
  tmp.cleanup();
});

describe.runIf(dialects.includes('postgres'))('the report in a local time zone on PostgreSQL', () => {
  it('is written, its daily chart adding up to the billed minutes', async () => {
    const service = await FakeCallsService.start({ seed: 12, calls: 40, ongoing: 0, spanHours: 48 });
    try {
      const url = await dbs.fresh('probe64_local');
      expect((await syncWith(settingsAt(service.baseUrls(), url, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      const month = new Date(service.calls[0]!.initiatedAt * 1000).toISOString().slice(0, 7);
      const period = resolvePeriod({ month, timezone: 'America/New_York' });
      await withStore(url, async ({ db }) => {
        const data = await collectReportData(db, period, { databasePath: url });
        const billed = data.billing.filter((r) => r.row_kind === 'total').reduce((n, r) => n + r.user_minutes, 0);
        expect(billed).toBeGreaterThan(0);
        expect(data.daily.points.reduce((n, p) => n + p.userMinutes, 0)).toBeCloseTo(billed, 6);
      });
      const config = join(tmp.dir, 'pg.json');
      writeFileSync(config, JSON.stringify({ database: url, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, ...service.baseUrls('app1') }] }));
      const out = join(tmp.dir, 'local.html');
      const r = await runCli(['report', '--config', config, '--month', month, '--timezone', 'America/New_York', '--out', out], { [KEY_ENV]: TEST_KEY });
      expect(r.stderr).not.toMatch(/unexpected error/);
      expect(r.code, r.stderr).toBe(0);
    } finally {
      await service.close();
    }
  });
});
