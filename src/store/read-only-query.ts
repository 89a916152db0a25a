import { ConfigError } from '../config/errors.js';
import { DEFAULT_QUERY_LIMIT, type QueryOptions, type QuerySink, type QuerySummary } from './destinations/contract.js';
import { resolveDestination } from './destinations/index.js';

export {
  DEFAULT_QUERY_LIMIT,
  DEFAULT_QUERY_TIMEOUT_SECONDS,
  QueryError,
  QueryInterruptedError,
  QueryRefusedError,
  type QueryOptions,
  type QuerySink,
  type QuerySummary,
} from './destinations/contract.js';

export interface QueryResult {
  columns: string[];
  rows: unknown[][];
  /** More rows than `limit` existed: only the first `limit` are in `rows`. */
  truncated: boolean;
}

/**
 * Runs one ad hoc SQL statement on a read-only connection, streaming at most `limit` rows to
 * `sink`. A statement that would write is refused and never changes the database; on a server (PostgreSQL)
 * connections as a superuser (or a member of a role that reaches the server's files or programs)
 * are refused. Throws ConfigError for a missing database and for SQL errors, with the server's message.
 */
export async function streamReadOnlyQuery(database: string, text: string, sink: QuerySink, opts: QueryOptions = {}): Promise<QuerySummary> {
  const limit = opts.limit ?? DEFAULT_QUERY_LIMIT;
  if (!Number.isInteger(limit) || limit < 0) throw new ConfigError(`query: limit ${limit}: expected a whole number of rows, 0 for no limit`);
  return resolveDestination(database).streamReadOnlyQuery(database, text, sink, { ...opts, limit });
}

/** streamReadOnlyQuery, every row kept in memory (at most `limit` of them). */
export async function runReadOnlyQuery(database: string, text: string, opts: QueryOptions = {}): Promise<QueryResult> {
  const result: QueryResult = { columns: [], rows: [], truncated: false };
  const summary = await streamReadOnlyQuery(
    database,
    text,
    {
      columns: (names) => void (result.columns = names),
      rows: (batch) => void result.rows.push(...batch),
    },
    opts,
  );
  result.truncated = summary.truncated;
  return result;
}
