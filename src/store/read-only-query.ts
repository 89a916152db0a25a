import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { ConfigError } from '../config/errors.js';
import { isPostgresUrl } from './connection.js';
import { displayUrl } from './postgres.js';

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
export async function runReadOnlyQuery(database: string, text: string): Promise<QueryResult> {
  return isPostgresUrl(database) ? runPostgresReadOnly(database, text) : runSqliteReadOnly(database, text);
}

/** PostgreSQL: the statement runs in a READ ONLY transaction that is always rolled back. */
async function runPostgresReadOnly(url: string, text: string): Promise<QueryResult> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    throw new ConfigError(`database ${displayUrl(url)} cannot be reached (${(err as Error).message})`);
  }
  try {
    await client.query('begin transaction read only');
    const res = await client.query({ text, rowMode: 'array' });
    const last = Array.isArray(res) ? res[res.length - 1] : res;
    return { columns: (last?.fields ?? []).map((f: { name: string }) => f.name), rows: (last?.rows ?? []) as unknown[][] };
  } catch (err) {
    const e = err as { code?: string; message: string };
    if (e.code === '25006') throw new QueryRefusedError('query is read-only: this statement would change the database, so it was not run. Use a SELECT (or WITH … SELECT).');
    throw new ConfigError(`query: ${e.message}`);
  } finally {
    await client.query('rollback').catch(() => undefined);
    await client.end();
  }
}

function runSqliteReadOnly(path: string, text: string): QueryResult {
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
