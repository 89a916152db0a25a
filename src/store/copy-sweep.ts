import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';

/**
 * Rows a sync deletes from the file: a group's members are replaced as a set (who left is gone), so
 * are a call's participant rows, recordings and transcriptions, and a call leaves the retry list once
 * Get Call answers. `copy` upserts by key and deletes nothing, so a copy run again after the file was
 * synced further kept all of those in the target: members who had left (beside a synced_groups.members
 * that no longer counted them), recordings the service had deleted, participant rows of a call that
 * has fewer now, exit 0 (probe71). Such rows are swept from the target after the tables are copied.
 *
 * Only rows whose parent (the group, the call) the file holds: the target may hold other apps, and
 * calls or groups synced into it after the first copy, which the file knows nothing about.
 */
interface SweptTable {
  table: 'group_members' | 'call_participant_rows' | 'call_recordings' | 'call_transcriptions' | 'detail_retries';
  /** What names a row, its parent's columns first; on the target, participants are named by (call_id, seq). */
  key: readonly string[];
  /** The parent's table and its columns (a prefix of `key`). */
  parent: { table: 'synced_groups' | 'calls'; columns: readonly string[] };
}

const SWEPT: readonly SweptTable[] = [
  { table: 'group_members', key: ['app_id', 'guid', 'uid'], parent: { table: 'synced_groups', columns: ['app_id', 'guid'] } },
  { table: 'call_participant_rows', key: ['app_id', 'session_id', 'seq'], parent: { table: 'calls', columns: ['app_id', 'session_id'] } },
  { table: 'call_recordings', key: ['app_id', 'session_id', 'rid'], parent: { table: 'calls', columns: ['app_id', 'session_id'] } },
  { table: 'call_transcriptions', key: ['app_id', 'session_id', 'tid'], parent: { table: 'calls', columns: ['app_id', 'session_id'] } },
  { table: 'detail_retries', key: ['app_id', 'session_id'], parent: { table: 'calls', columns: ['app_id', 'session_id'] } },
];

const SWEEP_BATCH = 500;

type Row = Record<string, unknown>;

const tupleOf = (r: Row, cols: readonly string[]): string => JSON.stringify(cols.map((c) => r[c] ?? null));

/** `(a, b) in (values (…), …)`: SQLite reads row values, which the source always is. */
function rowsIn(cols: RawBuilder<unknown>, rows: readonly Row[], names: readonly string[]): RawBuilder<unknown> {
  return sql`(${cols}) in (values ${sql.join(rows.map((r) => sql`(${sql.join(names.map((n) => sql`${r[n]}`))})`))})`;
}

/** One page of the target's rows of `apps`, in its key order, after `last` (participants carry call_id too). */
async function targetPage(to: Kysely<Database>, t: SweptTable, apps: readonly string[], last: readonly unknown[] | undefined): Promise<Row[]> {
  const inApps = sql`in (${sql.join(apps.map((a) => sql`${a}`))})`;
  if (t.table === 'call_participant_rows') {
    const after = last ? sql`and (t.call_id, t.seq) > (${last[0]}, ${last[1]})` : sql``;
    return (await sql<Row>`select c.app_id, c.session_id, t.seq, t.call_id from call_participant_rows t join calls c on c.call_id = t.call_id
      where c.app_id ${inApps} ${after} order by t.call_id, t.seq limit ${SWEEP_BATCH}`.execute(to)).rows;
  }
  const cols = sql.join(t.key.map((k) => sql.ref(k)));
  const after = last ? sql`and (${cols}) > (${sql.join(last.map((v) => sql`${v}`))})` : sql``;
  return (await sql<Row>`select ${cols} from ${sql.table(t.table)} where app_id ${inApps} ${after} order by ${cols} limit ${SWEEP_BATCH}`.execute(to)).rows;
}

/** Of `rows`, those whose parent the source holds and that the source itself does not hold. */
async function staleIn(from: Kysely<Database>, t: SweptTable, rows: readonly Row[]): Promise<Row[]> {
  const p = t.parent.columns;
  const parents = (await sql<Row>`select ${sql.join(p.map((c) => sql.ref(c)))} from ${sql.table(t.parent.table)}
    where ${rowsIn(sql.join(p.map((c) => sql.ref(c))), rows, p)}`.execute(from)).rows;
  const held = new Set(parents.map((r) => tupleOf(r, p)));
  const candidates = rows.filter((r) => held.has(tupleOf(r, p)));
  if (candidates.length === 0) return [];
  const there =
    t.table === 'call_participant_rows'
      ? await sql<Row>`select c.app_id, c.session_id, t.seq from call_participant_rows t join calls c on c.call_id = t.call_id
          where ${rowsIn(sql`c.app_id, c.session_id, t.seq`, candidates, t.key)}`.execute(from)
      : await sql<Row>`select ${sql.join(t.key.map((k) => sql.ref(k)))} from ${sql.table(t.table)}
          where ${rowsIn(sql.join(t.key.map((k) => sql.ref(k))), candidates, t.key)}`.execute(from);
  const kept = new Set(there.rows.map((r) => tupleOf(r, t.key)));
  return candidates.filter((r) => !kept.has(tupleOf(r, t.key)));
}

/**
 * Deletes from the target the rows of `table` (if it is one of SWEPT) the source no longer holds, for
 * the apps in `apps` and parents the source holds; returns how many. Run by a copy into a target that already
 * took a copy of this source (before that, the target holds none of these apps' rows).
 */
export async function sweepDeletedRows(from: Kysely<Database>, to: Kysely<Database>, table: string, apps: readonly string[]): Promise<number> {
  let swept = 0;
  const t = SWEPT.find((s) => s.table === table);
  if (apps.length === 0 || !t) return swept;
  const keyOnTarget = t.table === 'call_participant_rows' ? ['call_id', 'seq'] : t.key;
  let last: unknown[] | undefined;
  for (;;) {
    const page = await targetPage(to, t, apps, last);
    if (page.length === 0) return swept;
    const lastRow = page[page.length - 1]!;
    last = keyOnTarget.map((k) => lastRow[k]);
    const stale = await staleIn(from, t, page);
    if (stale.length === 0) continue;
    // Few rows as a rule (what changed since the last copy): one statement each, by the target's key.
    await to.transaction().execute(async (trx) => {
      for (const r of stale) {
        await sql`delete from ${sql.table(t.table)} where ${sql.join(keyOnTarget.map((k) => sql`${sql.ref(k)} = ${r[k]}`), sql` and `)}`.execute(trx);
      }
    });
    swept += stale.length;
  }
}
