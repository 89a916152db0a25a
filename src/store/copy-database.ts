import { sql, type Kysely } from 'kysely';
import { ConfigError } from '../config/errors.js';
import { refreshCallFigures } from './call-figures-repo.js';
import { sweepDeletedRows } from './copy-sweep.js';
import { destinationOf } from './destinations/index.js';
import { getSetting, saveSetting } from './settings-repo.js';
import type { Database } from './schema.js';

/**
 * Tables copied, parents before children (foreign keys), each with its key columns. A table added by
 * a migration goes here or into NOT_COPIED: test/integration/copy.covers-every-table.test.ts fails
 * until it is in one of them, so a new entity cannot be left behind by `copy` unnoticed.
 */
export const COPIED_TABLES: readonly {
  name: keyof Database & string; key: readonly string[]; serial?: string; omit?: string; byCallKey?: true;
  /**
   * Rows numbered by the database (serial ids): copied without their id, which the target assigns,
   * and matched by these columns instead (a row already there is not copied twice). Kept by id,
   * the source's runs 1–4 overwrote the target's own runs 1–2 of another app (probe round 16 c, F2).
   */
  natural?: readonly string[];
}[] = [
  // A call's call_id is its number in one database: the target numbers the calls it gets itself (a
  // target that already holds calls synced there keeps theirs), and each payload row is matched to
  // its call by (app_id, session_id) on both sides; so is each participant row.
  { name: 'calls', key: ['app_id', 'session_id'], omit: 'call_id' },
  { name: 'call_payload_rows', key: ['call_id'], byCallKey: true },
  { name: 'call_participant_rows', key: ['call_id', 'seq'], byCallKey: true },
  { name: 'call_recordings', key: ['app_id', 'session_id', 'rid'] },
  { name: 'call_transcriptions', key: ['app_id', 'session_id', 'tid'] },
  { name: 'rejected_records', key: ['id'], serial: 'id', natural: ['fingerprint', 'app_id', 'endpoint', 'record_key', 'run_id'] },
  { name: 'sync_runs', key: ['id'], serial: 'id', natural: ['run_id', 'app_id', 'region', 'started_at'] },
  { name: 'sync_state', key: ['app_id', 'region'] },
  // Calls whose Get Call is still owed: without them the target would never fetch those details.
  { name: 'detail_retries', key: ['app_id', 'session_id'] },
  { name: 'group_members', key: ['app_id', 'guid', 'uid'] },
  { name: 'synced_groups', key: ['app_id', 'guid'] },
  { name: 'callsync_settings', key: ['key'] },
];

/** Tables `copy` leaves behind on purpose, and why. */
export const NOT_COPIED: Readonly<Record<string, string>> = {
  leases: 'a lease belongs to a running process on the source; the target starts with none (PostgreSQL has no such table: advisory locks)',
  call_figure_rows: 'derived from calls: copy refreshes it from the view call_figures for each batch of calls it writes, as the sync does',
};

const BATCH_ROWS = 500;

export interface CopyResult {
  table: string;
  source: number;
  target: number;
}

type SourceRow = Record<string, unknown> & { __rowid?: number };

/** Whether a SQLite table has a rowid (a WITHOUT ROWID table is stored in its primary key's order). */
async function hasRowid(db: Kysely<Database>, table: string): Promise<boolean> {
  const r = await sql<{ sql: string | null }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db);
  return !/without\s+rowid\s*$/i.test(r.rows[0]?.sql ?? '');
}

async function pageByRowid(db: Kysely<Database>, table: string, last: unknown[] | undefined): Promise<SourceRow[]> {
  const after = (last?.[0] as number | undefined) ?? -1;
  return (await sql<SourceRow>`select rowid as __rowid, * from ${sql.table(table)} where rowid > ${after} order by rowid limit ${BATCH_ROWS}`.execute(db)).rows;
}

/** Rows of a table keyed by call_id (then `key`'s other columns), with their call's key, in key order. */
async function pageByCallKey(db: Kysely<Database>, table: string, key: readonly string[], last: unknown[] | undefined): Promise<SourceRow[]> {
  const cols = sql.join(key.map((k) => sql.ref(`t.${k}`)));
  const where = last ? sql`where (${cols}) > (${sql.join(last.map((v) => sql`${v}`))})` : sql``;
  return (await sql<SourceRow>`select c.app_id as __app_id, c.session_id as __session_id, t.* from ${sql.table(table)} t
    join calls c on c.call_id = t.call_id ${where} order by ${cols} limit ${BATCH_ROWS}`.execute(db)).rows;
}

/**
 * Writes rows keyed by call_id under the target's call_id of the same (app_id, session_id), looked
 * up once per batch: a subquery per row made PostgreSQL plan hundreds of subplans per statement
 * (participants took 2.6× as long to copy as when they were keyed by the text key). A row whose
 * call the target lacks gets a NULL key, which the target refuses: the copy stops rather than
 * store an orphan.
 */
async function upsertByCallKey(db: Kysely<Database>, table: string, key: readonly string[], rows: readonly SourceRow[]): Promise<void> {
  const columns = Object.keys(rows[0]!).filter((c) => c !== '__app_id' && c !== '__session_id');
  const updates = columns.filter((c) => !key.includes(c));
  const ids = new Map<string, unknown>();
  const byApp = new Map<string, Set<string>>();
  for (const r of rows) (byApp.get(r.__app_id as string) ?? byApp.set(r.__app_id as string, new Set()).get(r.__app_id as string)!).add(r.__session_id as string);
  for (const [app, sessions] of byApp) {
    const found = await db.selectFrom('calls').select(['call_id', 'session_id']).where('app_id', '=', app).where('session_id', 'in', [...sessions]).execute();
    for (const f of found) ids.set(`${app}\u0000${f.session_id}`, f.call_id);
  }
  const values = rows.map(
    (r) => sql`(${sql.join(columns.map((c) => (c === 'call_id' ? sql`${ids.get(`${r.__app_id as string}\u0000${r.__session_id as string}`) ?? null}` : sql`${r[c]}`)))})`,
  );
  await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${sql.join(values)}
    on conflict (${sql.join(key.map((k) => sql.ref(k)))}) do update set ${sql.join(updates.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}`.execute(db);
}

/** The stored figures of the calls of a batch just copied (store/call-figures-repo.ts), app by app. */
async function refreshCopiedFigures(trx: Kysely<Database>, rows: readonly Record<string, unknown>[]): Promise<void> {
  const byApp = new Map<string, string[]>();
  for (const r of rows) {
    const app = String(r.app_id);
    let ids = byApp.get(app);
    if (!ids) byApp.set(app, (ids = []));
    ids.push(String(r.session_id));
  }
  for (const [app, ids] of byApp) await refreshCallFigures(trx, app, ids);
}

async function pageByKey(db: Kysely<Database>, table: string, key: readonly string[], last: unknown[] | undefined): Promise<SourceRow[]> {
  const cols = sql.join(key.map((k) => sql.ref(k)));
  const where = last ? sql`where (${cols}) > (${sql.join(last.map((v) => sql`${v}`))})` : sql``;
  return (await sql<SourceRow>`select * from ${sql.table(table)} ${where} order by ${cols} limit ${BATCH_ROWS}`.execute(db)).rows;
}

/**
 * callsync_settings key recording that a target received (or is receiving) a copy of a source file;
 * its value is a CopyMark.
 */
const MARK_PREFIX = 'copied_from:';

interface CopyMark {
  /** `copying` until the copy's last table is done: a sync into a half-copied target is refused. */
  state: 'copying' | 'done';
  /**
   * The source's history: the run_id of its first sync run. Another file put at the same path (a
   * different history of the same app) is not the source this target got (probe round 17 a, 4).
   */
  history: string | null;
}

function readMark(value: string | undefined): CopyMark | undefined {
  if (value === undefined) return undefined;
  try {
    const m = JSON.parse(value) as Partial<CopyMark>;
    return (m.state === 'copying' || m.state === 'done') && (typeof m.history === 'string' || m.history === null) ? { state: m.state, history: m.history } : undefined;
  } catch {
    return undefined;
  }
}

async function writeMark(to: Kysely<Database>, source: string, mark: CopyMark): Promise<void> {
  await saveSetting(to, MARK_PREFIX + source, JSON.stringify(mark));
}

/** The source file of a copy into `db` that has not finished (a sync must not build on it), if any. */
export async function unfinishedCopy(db: Kysely<Database>): Promise<string | undefined> {
  const rows = await db.selectFrom('callsync_settings').select(['key', 'value']).where('key', 'like', `${MARK_PREFIX}%`).execute();
  return rows.find((r) => readMark(r.value)?.state === 'copying')?.key.slice(MARK_PREFIX.length);
}

async function sourceHistory(db: Kysely<Database>): Promise<string | null> {
  return (await db.selectFrom('sync_runs').select('run_id').orderBy('id').limit(1).executeTakeFirst())?.run_id ?? null;
}

/** Apps with calls, state or runs in a database. */
async function appsIn(db: Kysely<Database>): Promise<Set<string>> {
  const rows = await db.selectFrom('calls').select('app_id').distinct()
    .union(db.selectFrom('sync_state').select('app_id'))
    .union(db.selectFrom('sync_runs').select('app_id'))
    .execute();
  return new Set(rows.map((r) => r.app_id));
}

/**
 * A target that holds data of an app the source also holds is refused, unless it got it from this
 * very source (a copy that stopped half-way, run again): the two histories of one app would mix, a
 * call's participant rows from both sides added up (probe round 16 c, F2: a target synced on its
 * own got 3 participant rows for a call of 2, exit 0). A target holding only other apps is fine.
 */
async function assertTargetTakes(from: Kysely<Database>, to: Kysely<Database>, source: string, history: string | null): Promise<boolean> {
  const mark = readMark(await getSetting(to, MARK_PREFIX + source));
  if (mark && mark.history === history) return true;
  const theirs = await appsIn(to);
  const shared = [...(await appsIn(from))].filter((a) => theirs.has(a)).sort();
  if (shared.length) {
    throw new ConfigError(
      `copy: the target already holds app ${shared.slice(0, 5).join(', ')}${shared.length > 5 ? ', …' : ''}, synced there or copied from another file, not from ${source}; copying would mix the two histories of the same app. Copy into an empty database (or one holding only other apps)`,
    );
  }
  return false;
}

/** `(v, v, …), (…)`: the VALUES of `rows`, in `columns` order. */
function valuesOf(rows: readonly Record<string, unknown>[], columns: readonly string[]) {
  return sql.join(rows.map((r) => sql`(${sql.join(columns.map((c) => sql`${r[c]}`))})`));
}

/**
 * Rows of a batch the target does not hold yet (`fresh`), by the table's natural key (see
 * COPIED_TABLES), and rows it holds whose other columns differ from the file's (`changed`, with the
 * target's id). Rows held were copied once and never again: a rejected entry the file marked
 * `unlisted_at` after the first copy kept counting as a call the service holds in the target's
 * incremental proof, and a run copied while it was running stayed `running` there (probe71).
 */
async function splitByNatural(to: Kysely<Database>, table: string, natural: readonly string[], serial: string, rows: readonly Record<string, unknown>[]): Promise<{ fresh: Record<string, unknown>[]; changed: { id: unknown; row: Record<string, unknown> }[] }> {
  const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
  const tuple = (r: Record<string, unknown>): string => JSON.stringify(natural.map((c) => text(r[c])));
  const first = natural[0]!;
  const held = await sql<Record<string, unknown>>`select * from ${sql.table(table)}
    where ${sql.ref(first)} in (${sql.join([...new Set(rows.map((r) => r[first]))].map((v) => sql`${v}`))})`.execute(to);
  const there = new Map(held.rows.map((r) => [tuple(r), r]));
  const fresh: Record<string, unknown>[] = [];
  const changed: { id: unknown; row: Record<string, unknown> }[] = [];
  for (const r of rows) {
    const t = there.get(tuple(r));
    if (!t) fresh.push(r);
    else if (Object.keys(r).some((c) => c !== serial && text(r[c]) !== text(t[c]))) changed.push({ id: t[serial], row: r });
  }
  return { fresh, changed };
}

/**
 * Copies every table of a SQLite database into another database (PostgreSQL), batch by batch in
 * rowid order (key order for WITHOUT ROWID tables), one transaction per batch. Rows are upserted by key, so a copy that stopped half-way
 * can simply be run again. Leases are not copied (they belong to running processes). Serial ids and
 * calls.call_id are not kept: the target numbers those rows itself (see COPIED_TABLES).
 */
export async function copyDatabase(from: Kysely<Database>, to: Kysely<Database>, opts: { source: string; onTable?: (r: CopyResult) => void }): Promise<CopyResult[]> {
  const source = destinationOf(from);
  const target = destinationOf(to);
  if (!source.capabilities.rowid) throw new ConfigError(`copy: the source must be a database whose rows have a rowid (SQLite), not ${source.label}`);
  // One read transaction over the source: a snapshot. A sync writing the file meanwhile added calls
  // after their table was copied and participants of them before theirs was: the copy stopped with a
  // stack trace, rows half-written (probe round 17 a, 7).
  return from.transaction().execute(async (src) => {
    const history = await sourceHistory(src);
    /** This source was copied here before (the copy is run again): the target may hold rows the file has deleted since. */
    const again = await assertTargetTakes(src, to, opts.source, history);
    const apps = again ? [...(await appsIn(src))].sort() : [];
    // Marked before the first row: a copy that stops half-way can be run again, and no sync builds on it meanwhile.
    await writeMark(to, opts.source, { state: 'copying', history });
    const results: CopyResult[] = [];
    for (const t of COPIED_TABLES) {
      await copyTable(src, to, t);
      // Before the counts below, and before the mark says done: a sweep that stops half-way leaves the copy to be run again.
      if (again) await sweepDeletedRows(src, to, t.name, apps);
      // The target numbered the rows itself; a sequence moved past any id it holds costs nothing.
      if (t.serial) await target.restartSerial(to, t.name, t.serial);
      const count = async (db: Kysely<Database>): Promise<number> => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(t.name)}`.execute(db)).rows[0]?.n ?? 0);
      const r = { table: t.name, source: await count(src), target: await count(to) };
      results.push(r);
      opts.onTable?.(r);
    }
    await writeMark(to, opts.source, { state: 'done', history });
    return results;
  });
}

/** One table of COPIED_TABLES, batch by batch, one target transaction per batch. */
async function copyTable(from: Kysely<Database>, to: Kysely<Database>, t: (typeof COPIED_TABLES)[number]): Promise<void> {
  const byKey = !(await hasRowid(from, t.name));
  let last: unknown[] | undefined;
  for (;;) {
    // Keyset paging, by rowid (or, for a WITHOUT ROWID table, by its primary key, the order it is
    // stored in): constant cost per batch, whatever the table size.
    const batch = t.byCallKey ? await pageByCallKey(from, t.name, t.key, last) : byKey ? await pageByKey(from, t.name, t.key, last) : await pageByRowid(from, t.name, last);
    if (batch.length === 0) return;
    const lastRow = batch[batch.length - 1]!;
    last = byKey || t.byCallKey ? t.key.map((k) => lastRow[k]) : [lastRow.__rowid];
    if (t.byCallKey) {
      await to.transaction().execute((trx) => upsertByCallKey(trx, t.name, t.key, batch));
      continue;
    }
    const rows: Record<string, unknown>[] = batch.map(({ __rowid: _r, ...rest }) => rest);
    if (t.omit) for (const r of rows) delete r[t.omit];
    if (t.natural) {
      const serial = t.serial ?? 'id';
      const { fresh, changed } = await splitByNatural(to, t.name, t.natural, serial, rows);
      for (const r of fresh) delete r[serial];
      await to.transaction().execute(async (trx) => {
        // Few as a rule (what the file updated since the last copy): one statement each, by the target's id.
        for (const c of changed) {
          const cols = Object.keys(c.row).filter((k) => k !== serial);
          await sql`update ${sql.table(t.name)} set ${sql.join(cols.map((k) => sql`${sql.ref(k)} = ${c.row[k]}`))} where ${sql.ref(serial)} = ${c.id}`.execute(trx);
        }
        if (fresh.length === 0) return;
        const cols = Object.keys(fresh[0]!);
        await sql`insert into ${sql.table(t.name)} (${sql.join(cols.map((k) => sql.ref(k)))}) values ${valuesOf(fresh, cols)}`.execute(trx);
      });
      continue;
    }
    const columns = Object.keys(rows[0]!);
    const updates = columns.filter((c) => !t.key.includes(c));
    await to.transaction().execute(async (trx) => {
      await sql`insert into ${sql.table(t.name)} (${sql.join(columns.map((c) => sql.ref(c)))})
        values ${valuesOf(rows, columns)}
        on conflict (${sql.join(t.key.map((k) => sql.ref(k)))}) ${
          updates.length ? sql`do update set ${sql.join(updates.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}` : sql`do nothing`
        }`.execute(trx);
      if (t.name === 'calls') await refreshCopiedFigures(trx, rows);
    });
  }
}
