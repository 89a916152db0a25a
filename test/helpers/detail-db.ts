import { sql, type Kysely } from 'kysely';
import type { Simulator } from '../../src/simulator/index.js';
import type { Database } from '../../src/store/schema.js';

/*
 * Readers for the issue-12 contract (calls.details_source/detail_error/stale_at, detail_retries,
 * call_transcriptions, call_reconciliation.issues), in raw SQL with every column read by name: a
 * column or table the sync does not have yet reads as missing, so a test fails on what the
 * database lacks, not on a query error.
 */

export type Row = Record<string, unknown>;

/** Every `calls` row of the app, all columns, by sessionId. */
export async function callRows(db: Kysely<Database>, app: string): Promise<Map<string, Row>> {
  const rows = (await sql<Row>`select * from calls where app_id = ${app}`.execute(db)).rows;
  return new Map(rows.map((r) => [String(r.session_id), r]));
}

/** Rows of a table for the app, or the reason it cannot be read (missing table). */
export async function tableRows(db: Kysely<Database>, table: 'detail_retries' | 'call_transcriptions' | 'call_participants', app: string): Promise<Row[] | string> {
  try {
    return (await sql<Row>`select * from ${sql.table(table)} where app_id = ${app}`.execute(db)).rows;
  } catch (err) {
    return `${table} cannot be read: ${(err as Error).message.slice(0, 100)}`;
  }
}

/** detail_retries rows by sessionId (a string when the table cannot be read). */
export async function detailRetries(db: Kysely<Database>, app: string): Promise<Map<string, Row> | string> {
  const rows = await tableRows(db, 'detail_retries', app);
  return typeof rows === 'string' ? rows : new Map(rows.map((r) => [String(r.session_id), r]));
}

/** call_reconciliation.issues by sessionId. */
export async function reconciliationIssues(db: Kysely<Database>, app: string): Promise<Map<string, string>> {
  const rows = (await sql<{ session_id: string; issues: string | null }>`select session_id, issues from call_reconciliation where app_id = ${app}`.execute(db)).rows;
  return new Map(rows.map((r) => [r.session_id, r.issues ?? '']));
}

/** record_key of every rejected record of the app. */
export async function rejectedKeys(db: Kysely<Database>, app: string): Promise<Set<string>> {
  const rows = await db.selectFrom('rejected_records').select('record_key').where('app_id', '=', app).execute();
  return new Set(rows.map((r) => r.record_key));
}

/** A column of a row as a number (PostgreSQL hands bigint back as text), null when NULL or absent. */
export function num(row: Row | undefined, column: string): number | null {
  const v = row?.[column];
  return v === null || v === undefined ? null : Number(v);
}

/** Every List Calls entry the simulator serves now, by sessionId (the last entry wins for a call listed twice). */
export async function listEntries(sim: Simulator, app: string, apikey: string, perPage = 100): Promise<Map<string, Row>> {
  const out = new Map<string, Row>();
  for (let page = 1; page < 10_000; page++) {
    const res = await fetch(`${sim.baseUrls(app).callsBaseUrl}/calls?page=${page}&perPage=${perPage}`, { headers: { apikey } });
    const { data } = (await res.json()) as { data: Row[] };
    if (data.length === 0) return out;
    for (const e of data) out.set(String(e.sessionId), e);
  }
  return out;
}
