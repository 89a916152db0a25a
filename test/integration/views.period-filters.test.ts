import { sql, type Kysely } from 'kysely';
import { describe, expect } from 'vitest';
import type { Database } from '../../src/store/schema.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';

/**
 * Issue 16: ad hoc users filter the reporting views by period every day. Each view filtered on its
 * `month` / `day` column gives exactly the rows of the unfiltered view in that period, the stored
 * period columns are the UTC day and month of started_at, and the filter is served by an index (on
 * PostgreSQL with sequential scans switched off: 800 calls are too few for its planner to prefer
 * the index on its own).
 */
const dialects = await testDialects();

type Row = Record<string, unknown>;

async function rows(db: Kysely<Database>, text: string): Promise<Row[]> {
  return (await sql.raw<Row>(text).execute(db)).rows;
}

/**
 * Rows as comparable text, order-free (the views have no order). Numbers to 12 digits: a sum read
 * through another plan adds the same figures in another order, which moves the last bits.
 */
function canon(rs: Row[]): string[] {
  const cell = (v: unknown): string | null => (v === null ? null : typeof v === 'number' || (typeof v === 'string' && /^-?[\d.]+(e-?\d+)?$/.test(v)) ? Number(v).toPrecision(12) : String(v));
  return rs.map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, cell(r[k])]))).sort();
}

async function plan(db: Kysely<Database>, dialect: string, text: string): Promise<string> {
  if (dialect === 'sqlite') return (await rows(db, `explain query plan ${text}`)).map((r) => String(r.detail)).join('\n');
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    return (await sql.raw<Row>(`explain ${text}`).execute(trx)).rows.map((r) => String(r['QUERY PLAN'])).join('\n');
  });
}

describe.each(dialects)('reporting views filtered by period [%s]', (dialect) => {
  test.override({ dialect, simApps: [{ appId: 'app1', calls: 800 }] });

  it('give the unfiltered rows of that period, through an index', async ({ sim, database }) => {
    expect((await syncWith(testSettings(sim, ['app1'], database))).ok).toBe(true);
    await withStore(database, async (s) => {
      const calls = await s.db.selectFrom('calls').select(['started_at', 'started_day', 'started_month']).execute();
      expect(calls.filter((c) => c.started_at !== null).length).toBeGreaterThan(500);
      for (const c of calls) {
        const iso = c.started_at === null ? null : new Date(Number(c.started_at) * 1000).toISOString();
        expect([c.started_day, c.started_month]).toEqual([iso?.slice(0, 10) ?? null, iso?.slice(0, 7) ?? null]);
      }
      // The busiest month, and a week inside it.
      const months = new Map<string, number>();
      for (const c of calls) if (c.started_month) months.set(c.started_month, (months.get(c.started_month) ?? 0) + 1);
      const month = [...months.entries()].sort((a, b) => b[1] - a[1])[0]![0];
      const [from, to] = [`${month}-08`, `${month}-14`];
      const inMonth = (r: Row): boolean => r.month === month;
      const inWeek = (r: Row): boolean => String(r.day) >= from && String(r.day) <= to;

      const daily = await rows(s.db, 'select * from daily_usage');
      const users = await rows(s.db, 'select * from user_usage');
      const recon = await rows(s.db, 'select * from call_reconciliation');
      const cases: [string, Row[]][] = [
        [`select * from daily_usage where month = '${month}'`, daily.filter(inMonth)],
        [`select * from daily_usage where day between '${from}' and '${to}'`, daily.filter(inWeek)],
        [`select * from user_usage where month = '${month}'`, users.filter(inMonth)],
        [`select * from call_reconciliation where month = '${month}'`, recon.filter(inMonth)],
        [`select * from call_reconciliation where day between '${from}' and '${to}'`, recon.filter(inWeek)],
      ];
      for (const [query, expected] of cases) {
        expect(expected.length, query).toBeGreaterThan(0);
        expect(canon(await rows(s.db, query)), query).toEqual(canon(expected));
        const p = await plan(s.db, dialect, query);
        // SQLite names the index it searches; PostgreSQL an Index (Only) Scan or a Bitmap Index Scan on one.
        expect(p, `${query}\n${p}`).toMatch(dialect === 'sqlite' ? /SEARCH c(alls)? USING (COVERING )?INDEX calls_(started_month|started_day|month_key)/ : /Index (Only )?Scan (using|on) calls_(started_month|started_day|month_key)/);
      }
      // Every call with a start is in a day and a month of the views, once.
      const sum = (rs: Row[], k: string): number => rs.reduce((n, r) => n + Number(r[k]), 0);
      expect(sum(daily, 'calls')).toBe(calls.filter((c) => c.started_at !== null).length);
      expect(recon.filter((r) => r.started_at !== null && r.day === null)).toEqual([]);
    });
  });
});
