import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testDialects, databaseFactory } from '../helpers/databases.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, syncWith, tempDir, TEST_KEY } from '../helpers/harness.js';
import { resolvePeriod } from '../../src/export/period.js';
import { audioOf, minutesOf, startFinanceService, videoOf } from './support/finance-calls.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe75: the same calls synced into SQLite and into PostgreSQL give the same billing export, byte
 * for byte (CSV and JSON, UTC and a zone with a DST change, with --with-usage too), the same report
 * page but for the line naming the database, and the same reconcile CSV. With the service's usage
 * equal to every minute it holds, the deltas are exactly what the export says it left out.
 */
const dialects = await testDialects();
const tmp = tempDir('probe75-identical-');
afterAll(() => tmp.cleanup());

describe.runIf(dialects.includes('postgres'))('SQLite and PostgreSQL give the same finance outputs', () => {
  const sqlite = databaseFactory('sqlite', tmp.dir);
  const postgres = databaseFactory('postgres', tmp.dir);
  afterAll(() => postgres.dropAll());

  it('export (csv, json, --with-usage), report and reconcile csv are byte-identical', async () => {
    const { service, flagged, unplaced } = await startFinanceService();
    try {
      const dbs = [await sqlite.fresh('same'), await postgres.fresh('same')];
      for (const db of dbs) expect((await syncWith(settingsAt(service.baseUrls(), db, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      const configs = dbs.map((database, i) => {
        const path = join(tmp.dir, `cfg-${i}.json`);
        writeFileSync(path, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...service.baseUrls() }] }));
        return path;
      });
      const env = { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' };
      const both = async (args: string[]): Promise<string[]> =>
        Promise.all(configs.map(async (c) => {
          const r = await runCli([...args, '--config', c], env);
          expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
          return r.stdout;
        }));

      for (const tz of ['UTC', 'Europe/Berlin']) {
        const period = resolvePeriod({ month: '2026-10', timezone: tz });
        for (const format of ['csv', 'json']) {
          const [a, b] = await both(['export', 'billing', '--month', '2026-10', '--timezone', tz, '--format', format]);
          expect(b, `${tz} ${format}`).toBe(a);
        }
        // The service's usage: every minute of the calls it places in the period (by start, else initiation).
        const held = service.calls.filter((c) => (c.startedAt ?? c.initiatedAt) >= period.start && (c.startedAt ?? c.initiatedAt) < period.end);
        const audio = held.reduce((s, c) => s + audioOf(c), 0);
        const video = held.reduce((s, c) => s + videoOf(c), 0);
        service.opts.usage = { data: { metrics: { audio_minutes: audio, video_minutes: video, recorded_minutes: 0 }, time_range: { fromDate: period.start * 1000, toDate: period.end * 1000 } } };
        const [a, b] = await both(['export', 'billing', '--month', '2026-10', '--timezone', tz, '--format', 'json', '--with-usage']);
        expect(b, `${tz} --with-usage`).toBe(a);
        const total = (JSON.parse(a!) as Record<string, number>[]).find((r) => (r.row_kind as unknown) === 'total')!;
        // What the export left out: the flagged call's minutes (its column) and the unplaced call's (its note).
        const unplacedIn = unplaced.initiatedAt >= period.start && unplaced.initiatedAt < period.end;
        const leftOut = total.flagged_user_minutes! + (unplacedIn ? minutesOf(unplaced) : 0);
        expect(total.usage_audio_delta_minutes! + total.usage_video_delta_minutes!, tz).toBeCloseTo(-leftOut, 3);
        expect(total.flagged_user_minutes, tz).toBeCloseTo(minutesOf(flagged), 3);
      }

      // The page names its database twice (the header and the footer) and when it was synced; the rest must be the same.
      const pages = await Promise.all(configs.map(async (c, i) => {
        const out = join(tmp.dir, `page-${i}.html`);
        const r = await runCli(['report', '--month', '2026-10', '--timezone', 'Europe/Berlin', '--out', out, '--config', c], env);
        expect(r.code, r.stderr).toBe(0);
        return readFileSync(out, 'utf8').replace(/<dt>Data from<\/dt><dd>[^<]*<\/dd>/, '').replace(/from the database .*?\. Minutes are shown/, '')
          // Each database was synced at its own moment.
          .replace(/last synced \d{4}-\d{2}-\d{2} \d{2}:\d{2}/, '');
      }));
      expect(pages[1]).toBe(pages[0]);

      const [ra, rb] = await both(['reconcile', '--from', '2026-10-01', '--to', '2026-11-01', '--format', 'csv']);
      expect(rb).toBe(ra);
    } finally {
      await service.close();
    }
  }, 120_000);
});
