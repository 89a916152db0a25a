import SqliteDatabase from 'better-sqlite3';
import { openSqliteReadOnly } from './sqlite-open-problem.js';
import { errorCode, exactInteger, ONE_STATEMENT, QUERY_BATCH, QueryError, QueryRefusedError, type QuerySink, type QuerySummary } from './contract.js';

/**
 * The statement is prepared on a connection opened read-only, and refused unless SQLite says it
 * does not write (`stmt.readonly`): nothing that would change the file ever runs.
 */
export function streamSqlite(path: string, text: string, sink: QuerySink, limit: number): Promise<QuerySummary> {
  const native = openSqliteReadOnly(path);
  let stmt: SqliteDatabase.Statement;
  try {
    try {
      stmt = native.prepare(text);
    } catch (err) {
      const msg = (err as Error).message;
      // better-sqlite3 says "more than one statement" with a bare RangeError and these words only
      // (no code): read here, in the destination, the one place that reads its native errors.
      if (err instanceof RangeError && /more than one statement/i.test(msg)) throw new QueryError('QUERY_INVALID', ONE_STATEMENT);
      throw new QueryError('QUERY_INVALID', `query: ${msg}`);
    }
    if (!stmt.readonly) {
      throw new QueryRefusedError('query is read-only: this statement would change the database, so it was not run. Use a SELECT (or WITH … SELECT).');
    }
  } catch (err) {
    native.close();
    throw err;
  }
  return (async () => {
    try {
      if (!stmt.reader) {
        await sink.columns([]);
        return { rows: 0, truncated: false };
      }
      stmt.raw(true);
      // Integers as bigint, given back as numbers where a double holds them exactly (exactInteger).
      stmt.safeIntegers(true);
      await sink.columns(stmt.columns().map((c) => c.name));
      let sent = 0;
      let truncated = false;
      let batch: unknown[][] = [];
      try {
        for (const row of stmt.iterate() as Iterable<unknown[]>) {
          if (limit !== 0 && sent + batch.length === limit) {
            truncated = true;
            break;
          }
          for (let i = 0; i < row.length; i++) if (typeof row[i] === 'bigint') row[i] = exactInteger(row[i] as bigint);
          batch.push(row);
          if (batch.length === QUERY_BATCH) {
            // The iterator holds the connection while the sink writes; nothing else uses it.
            await sink.rows(batch);
            sent += batch.length;
            batch = [];
          }
        }
      } catch (err) {
        // SQLite's own errors (a runtime error in the statement); the sink's are passed on as they are.
        if (!errorCode(err).startsWith('SQLITE_')) throw err;
        throw new QueryError('QUERY_INVALID', `query: ${(err as Error).message}`);
      }
      if (batch.length) await sink.rows(batch);
      sent += batch.length;
      return { rows: sent, truncated };
    } finally {
      native.close();
    }
  })();
}

