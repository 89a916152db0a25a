import { sql, type Kysely } from 'kysely';
import { destinationOf } from '../../src/store/destinations/index.js';
import type { Database } from '../../src/store/schema.js';

/** Every stored row of the call tables for an app, keyed by session, as comparable text. */
export async function dumpCalls(db: Kysely<Database>, appId: string): Promise<Map<string, string>> {
  const calls = await db.selectFrom('calls').selectAll().where('app_id', '=', appId).execute();
  const parts = await db.selectFrom('call_participants').selectAll().where('app_id', '=', appId).orderBy('seq').execute();
  const recs = await db.selectFrom('call_recordings').selectAll().where('app_id', '=', appId).orderBy('rid').execute();
  const out = new Map<string, string>();
  for (const c of calls) {
    out.set(
      c.session_id,
      JSON.stringify({ c, p: parts.filter((p) => p.session_id === c.session_id), r: recs.filter((r) => r.session_id === c.session_id) }),
    );
  }
  return out;
}

export function changedKeys(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

/** SQLite's integrity and foreign-key checks; a server (PostgreSQL) enforces both itself, so there it is []. */
export async function integrityProblems(db: Kysely<Database>): Promise<string[]> {
  if (!destinationOf(db).capabilities.localFile) return [];
  const integrity = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(db);
  const fk = await sql<Record<string, unknown>>`pragma foreign_key_check`.execute(db);
  const out = integrity.rows.map((r) => r.integrity_check).filter((v) => v !== 'ok');
  for (const r of fk.rows) out.push(`foreign key: ${JSON.stringify(r)}`);
  return out;
}
