import SqliteDatabase from 'better-sqlite3';
import { ConfigError } from '../config/errors.js';

export interface QueryResult {
  columns: string[];
  rows: unknown[][];
}

/** A statement refused because it would change the database. */
export class QueryRefusedError extends Error {
  readonly code = 'QUERY_NOT_READ_ONLY';
}

/**
 * Runs one ad hoc SQL statement on a read-only connection. A statement that would write (INSERT,
 * UPDATE, DELETE, DDL, a writing PRAGMA) is refused before it runs; the read-only connection is a
 * second guard. Throws ConfigError for a missing database and for SQL errors, with SQLite's message.
 */
export function runReadOnlyQuery(path: string, text: string): QueryResult {
  let native: SqliteDatabase.Database;
  try {
    native = new SqliteDatabase(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new ConfigError(`database ${path} cannot be opened read-only (${(err as Error).message}); run \`callsync sync\` first or pass --database`);
  }
  try {
    let stmt: SqliteDatabase.Statement;
    try {
      stmt = native.prepare(text);
    } catch (err) {
      const msg = (err as Error).message;
      if (/more than one statement/i.test(msg)) throw new ConfigError('query: give one SQL statement at a time');
      throw new ConfigError(`query: ${msg}`);
    }
    if (!stmt.readonly) {
      throw new QueryRefusedError('query is read-only: this statement would change the database, so it was not run. Use a SELECT (or WITH … SELECT).');
    }
    if (!stmt.reader) return { columns: [], rows: [] };
    stmt.raw(true);
    const columns = stmt.columns().map((c) => c.name);
    try {
      return { columns, rows: stmt.all() as unknown[][] };
    } catch (err) {
      throw new ConfigError(`query: ${(err as Error).message}`);
    }
  } finally {
    native.close();
  }
}
