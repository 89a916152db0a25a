import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BILLING_COLUMNS } from '../../src/export/billing.js';
import { runCli } from '../helpers/cli.js';
import { syncWith, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from '../reliability/support/fake-calls-service.js';
import { settingsAt } from '../reliability/support/matrix.js';

/**
 * Issue 13, point 13: the service may name a call type 'all', the very label of the billing
 * export's per-app total. Such calls go through the real sync over real HTTP; the export and the
 * report (real CLI) must still tell the total from the type.
 */
const NOW = Math.floor(Date.now() / 1000);
const DAY = 86_400;
const day = (t: number): string => new Date(t * 1000).toISOString().slice(0, 10);
const PERIOD = ['--from', day(NOW - 3 * DAY), '--to', day(NOW + 2 * DAY)];
const TYPES = ['all', 'all', 'audio', 'audio', 'audio', 'video'];

describe("a call type named 'all' is not the app's total", () => {
  const tmp = tempDir();
  const db = `${tmp.dir}/calls.db`;
  let fake: FakeCallsService;

  beforeAll(async () => {
    fake = await FakeCallsService.start({ calls: 0, ongoing: 0 });
    TYPES.forEach((type, i) => {
      fake.addCall({ at: NOW - DAY - i * 600, status: 'ended' }).type = type;
    });
    const summary = await syncWith(settingsAt(fake.baseUrls('app1'), db));
    expect(['ok', 'partial']).toContain(summary.results[0]!.status);
  });
  afterAll(async () => {
    await fake.close();
    tmp.cleanup();
  });

  it('CSV and JSON: row_kind follows every older column; one total row with every call, the type row with its own', async () => {
    const csv = await runCli(['export', 'billing', '--database', db, ...PERIOD]);
    expect([csv.code, csv.stderr]).toEqual([0, '']);
    const records = parse(csv.stdout, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual([...BILLING_COLUMNS]);
    // After every older column (only `stale`, added later, follows it): CSV readers by position keep working.
    expect(BILLING_COLUMNS.slice(-2)).toEqual(['row_kind', 'stale']);
    const json = await runCli(['export', 'billing', '--database', db, ...PERIOD, '--format', 'json']);
    expect(json.code).toBe(0);
    const objects = JSON.parse(json.stdout) as Record<string, string | number>[];
    for (const rows of [records, objects]) {
      const got = rows.map((r) => [r.type, r.row_kind, Number(r.calls)]);
      // Type rows by type (the service's 'all' among them), then the total.
      expect(got).toEqual([
        ['all', 'type', 2],
        ['audio', 'type', 3],
        ['video', 'type', 1],
        ['all', 'total', TYPES.length],
      ]);
    }
  });

  it('HTML report: one total row, the type row shown as a type, and the totals count each call once', async () => {
    const out = `${tmp.dir}/report.html`;
    const r = await runCli(['report', '--database', db, ...PERIOD, '--out', out]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    // The command's own summary line counts the calls once, not the 'all' type row on top.
    expect(r.stdout).toContain(`, ${TYPES.length} calls,`);
    const page = readFileSync(out, 'utf8');
    const billingRows = [...page.matchAll(/<tr( class="total")?>\s*<td>app1<\/td><td>us<\/td><td>(.*?)<\/td>\s*<td class="num">(\d+)<\/td>/g)].map((m) => [m[1] ? 'total' : 'type', m[2], Number(m[3])]);
    expect(billingRows).toEqual([
      ['type', 'all', 2],
      ['type', 'audio', 3],
      ['type', 'video', 1],
      ['total', '<strong>All types</strong>', TYPES.length],
    ]);
    expect(page.match(/class="total"/g)?.length).toBe(1);
    expect(page).toContain(`<div class="label">Calls</div><div class="value">${TYPES.length}</div>`);
  });
});
