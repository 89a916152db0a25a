import { sql, type Kysely } from 'kysely';
import { ConfigError } from '../config/errors.js';
import { destinationOf } from './destinations/index.js';
import type { Database } from './schema.js';

/**
 * Tables copied, parents before children (foreign keys), each with its key columns. A table added by
 * a migration goes here or into NOT_COPIED: test/integration/copy.covers-every-table.test.ts fails
 * until it is in one of them, so a new entity cannot be left behind by `copy` unnoticed.
 */
export const COPIED_TABLES: readonly { name: keyof Database & string; key: readonly string[]; serial?: string }[] = [
  { name: 'calls', key: ['app_id', 'session_id'] },
  { name: 'call_participants', key: ['app_id', 'session_id', 'seq'] },
  { name: 'call_recordings', key: ['app_id', 'session_id', 'rid'] },
  { name: 'call_transcriptions', key: ['app_id', 'session_id', 'tid'] },
  { name: 'rejected_records', key: ['id'], serial: 'id' },
  { name: 'sync_runs', key: ['id'], serial: 'id' },
  { name: 'sync_state', key: ['app_id', 'region'] },
  // Calls whose Get Call is still owed: without them the target would never fetch those details.
  { name: 'detail_retries', key: ['app_id', 'session_id'] },
  { name: 'group_members', key: ['app_id', 'guid', 'uid'] },
  { name: 'synced_groups', key: ['app_id', 'guid'] },
  { name: 'callsync_settings', key: ['key'] },
  { name: 'app_ticks', key: ['app_id', 'region', 'tick_key'] },
];

/** Tables `copy` leaves behind on purpose, and why. */
export const NOT_COPIED: Readonly<Record<string, string>> = {
  leases: 'a lease belongs to a running process on the source; the target starts with none',
};

const BATCH_ROWS = 500;

export interface CopyResult {
  table: string;
  source: number;
  target: number;
}

/**
 * Copies every table of a SQLite database into another database (PostgreSQL), batch by batch in
 * rowid order, one transaction per batch. Rows are upserted by key, so a copy that stopped half-way
 * can simply be run again. Leases are not copied (they belong to running processes). Serial ids are
 * kept, and the target destination moves its sequences past them (restartSerial).
 */
export async function copyDatabase(from: Kysely<Database>, to: Kysely<Database>, onTable?: (r: CopyResult) => void): Promise<CopyResult[]> {
  const source = destinationOf(from);
  const target = destinationOf(to);
  if (!source.capabilities.rowid) throw new ConfigError(`copy: the source must be a database whose rows have a rowid (SQLite), not ${source.label}`);
  const results: CopyResult[] = [];
  for (const t of COPIED_TABLES) {
    let last = -1;
    for (;;) {
      // rowid keyset paging: constant cost per batch, whatever the table size.
      const batch = await sql<Record<string, unknown> & { __rowid: number }>`select rowid as __rowid, * from ${sql.table(t.name)} where rowid > ${last} order by rowid limit ${BATCH_ROWS}`.execute(from);
      if (batch.rows.length === 0) break;
      last = batch.rows[batch.rows.length - 1]!.__rowid;
      const rows = batch.rows.map(({ __rowid: _r, ...rest }) => rest);
      const columns = Object.keys(rows[0]!);
      const updates = columns.filter((c) => !t.key.includes(c));
      await to.transaction().execute(async (trx) => {
        await sql`insert into ${sql.table(t.name)} (${sql.join(columns.map((c) => sql.ref(c)))})
          values ${sql.join(rows.map((r) => sql`(${sql.join(columns.map((c) => sql`${r[c]}`))})`))}
          on conflict (${sql.join(t.key.map((k) => sql.ref(k)))}) ${
            updates.length ? sql`do update set ${sql.join(updates.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}` : sql`do nothing`
          }`.execute(trx);
      });
    }
    if (t.serial) await target.restartSerial(to, t.name, t.serial);
    const count = async (db: Kysely<Database>): Promise<number> => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(t.name)}`.execute(db)).rows[0]?.n ?? 0);
    const r = { table: t.name, source: await count(from), target: await count(to) };
    results.push(r);
    onTable?.(r);
  }
  return results;
}
