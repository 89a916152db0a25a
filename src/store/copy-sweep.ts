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

/**
 * One page of the target's rows after `last`, in its key order, those of `apps` among them (a page
 * may then hold none: the caller goes on from `next`). Participants are paged by their own key
 * (call_id, seq) alone and their calls looked up by call_id: paged joined to `calls` and filtered on
 * its app_id, PostgreSQL merge-joined from the first call on every page (97 ms a page at call 50,000;
 * a second copy of 100k calls was still sweeping after 8 minutes, its first took 3).
 */
async function targetPage(to: Kysely<Database>, t: SweptTable, apps: readonly string[], last: readonly unknown[] | undefined): Promise<{ rows: Row[]; next: unknown[] | undefined }> {
  if (t.table === 'call_participant_rows') {
    const after = last ? sql`where (call_id, seq) > (${last[0]}, ${last[1]})` : sql``;
    const page = (await sql<Row>`select call_id, seq from call_participant_rows ${after} order by call_id, seq limit ${SWEEP_BATCH}`.execute(to)).rows;
    const lastRow = page[page.length - 1];
    if (!lastRow) return { rows: [], next: undefined };
    const ids = [...new Set(page.map((r) => r.call_id))];
    const calls = (await sql<Row>`select call_id, app_id, session_id from calls where call_id in (${sql.join(ids.map((id) => sql`${id}`))})`.execute(to)).rows;
    const wanted = new Set(apps);
    const byId = new Map(calls.filter((c) => wanted.has(String(c.app_id))).map((c) => [String(c.call_id), c]));
    const rows = page.flatMap((r) => {
      const c = byId.get(String(r.call_id));
      return c ? [{ app_id: c.app_id, session_id: c.session_id, seq: r.seq, call_id: r.call_id }] : [];
    });
    return { rows, next: [lastRow.call_id, lastRow.seq] };
  }
  const inApps = sql`in (${sql.join(apps.map((a) => sql`${a}`))})`;
  const cols = sql.join(t.key.map((k) => sql.ref(k)));
  const after = last ? sql`and (${cols}) > (${sql.join(last.map((v) => sql`${v}`))})` : sql``;
  const rows = (await sql<Row>`select ${cols} from ${sql.table(t.table)} where app_id ${inApps} ${after} order by ${cols} limit ${SWEEP_BATCH}`.execute(to)).rows;
  const lastRow = rows[rows.length - 1];
  return { rows, next: lastRow ? t.key.map((k) => lastRow[k]) : undefined };
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
    const { rows: page, next } = await targetPage(to, t, apps, last);
    if (next === undefined) return swept;
    last = next;
    if (page.length === 0) continue;
    const stale = await staleIn(from, t, page);
    if (stale.length === 0) continue;
    // One statement a page (a group emptied at the service leaves all its members to go at once); a
    // list of row constructors, not VALUES, so each parameter takes its column's type.
    const keys = sql.join(keyOnTarget.map((k) => sql.ref(k)));
    await sql`delete from ${sql.table(t.table)} where (${keys}) in (${sql.join(stale.map((r) => sql`(${sql.join(keyOnTarget.map((k) => sql`${r[k]}`))})`))})`.execute(to);
    swept += stale.length;
  }
}
