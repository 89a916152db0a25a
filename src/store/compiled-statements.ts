import { CompiledQuery, type DialectAdapter, type Kysely, type QueryResult, type Transaction } from 'kysely';
import { InternalError } from '../config/errors.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database> | Transaction<Database>;

/** Keys bound in one `in (…)` list, at most: far below both databases' parameter limits. */
export const MAX_IDS = 1024;

/**
 * Splits `n` rows into statement sizes taken from {max, max/2, …, 2, 1} (full `max` chunks, then the
 * binary digits of the rest), so that each statement shape is compiled once and a batch of any
 * size needs at most log2(max) + ⌈n/max⌉ statements.
 */
export function statementSizes(n: number, max: number): number[] {
  // The rest is split by its binary digits: with any other max, the sizes would not add up to n.
  if (max < 1 || (max & (max - 1)) !== 0) throw new InternalError(`store: statement size ${max} is not a power of two`);
  const out: number[] = [];
  let rest = n;
  while (rest >= max) {
    out.push(max);
    rest -= max;
  }
  for (let b = max >> 1; b >= 1; b >>= 1) {
    if (rest & b) out.push(b);
  }
  return out;
}

/**
 * Compiled statements by dialect and shape. Building and compiling a Kysely insert of a page of
 * 34-column rows cost more CPU than SQLite spent storing them, so each shape (statement kind and
 * row count) is compiled once with placeholder values, by the dialect's own compiler, and only its
 * SQL text is kept (not the operation tree, which holds a node per value) to be run again with new
 * parameters. Any dialect works: the SQL text is the dialect's.
 */
const sqlByDialect = new WeakMap<DialectAdapter, Map<string, string>>();

export function compiledOnce(db: Db, key: string, expectedParams: number, build: () => CompiledQuery): string {
  const adapter = db.getExecutor().adapter;
  let cache = sqlByDialect.get(adapter);
  if (!cache) sqlByDialect.set(adapter, (cache = new Map()));
  let text = cache.get(key);
  if (text === undefined) {
    const q = build();
    // The parameters must be exactly the row values in column order; a compiler that inlines or adds
    // one would bind the wrong values, so refuse rather than write garbage.
    if (q.parameters.length !== expectedParams) throw new InternalError(`store: statement ${key} compiled to ${q.parameters.length} parameters, expected ${expectedParams}`);
    text = q.sql;
    cache.set(key, text);
  }
  return text;
}

export function run(db: Db, sqlText: string, parameters: unknown[]): Promise<QueryResult<unknown>> {
  return db.executeQuery(CompiledQuery.raw(sqlText, parameters));
}

/** A row of `columns` whose values are all placeholders (compiled into parameters, never stored). */
export function placeholderRow<C extends string>(columns: readonly C[]): Record<C, number> {
  const row = {} as Record<C, number>;
  for (const c of columns) row[c] = 0;
  return row;
}

/**
 * The parameters of `count` rows from `from`, in column order. Sized once: grown by push, the
 * arrays of a 512-row statement (17,408 values) were reallocated and copied a dozen times.
 */
function rowValues<R extends object>(rows: readonly R[], from: number, count: number, columns: readonly (keyof R & string)[]): unknown[] {
  const out = new Array<unknown>(count * columns.length);
  let j = 0;
  for (let i = from; i < from + count; i++) {
    const r = rows[i]!;
    for (const c of columns) out[j++] = r[c] ?? null;
  }
  return out;
}

/**
 * Writes `rows` with as few statements as statementSizes allows, each shape compiled once by
 * `build(n)` (an n-row statement whose parameters are the rows' `columns`, in order).
 */
export async function insertRows<R extends object>(
  trx: Db, kind: string, rows: readonly R[], columns: readonly (keyof R & string)[], max: number, build: (n: number) => CompiledQuery,
  onResult?: (res: QueryResult<unknown>) => void,
): Promise<void> {
  let at = 0;
  for (const n of statementSizes(rows.length, max)) {
    const q = compiledOnce(trx, `${kind}:${n}`, n * columns.length, () => build(n));
    const params = rowValues(rows, at, n, columns);
    at += n;
    const res = await run(trx, q, params);
    onResult?.(res);
  }
}
