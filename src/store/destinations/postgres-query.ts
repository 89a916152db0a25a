import type pg from 'pg';
import { CallsyncError } from '../../config/errors.js';
import {
  DEFAULT_QUERY_TIMEOUT_SECONDS,
  QUERY_BATCH as BATCH,
  ONE_STATEMENT,
  QueryError,
  QueryInterruptedError,
  QueryRefusedError,
  READ_ONLY,
  type QueryOptions,
  type QuerySink,
  type QuerySummary,
} from './contract.js';
import { connectionError, connectionString, displayUrl, loadPg, mapPostgresError } from './postgres-connection.js';

/** The SQLSTATEs of the PostgreSQL errors given a meaning here. */
const PG = {
  SYNTAX_ERROR: '42601',
  FEATURE_NOT_SUPPORTED: '0A000',
  READ_ONLY_TRANSACTION: '25006',
} as const;

/** The fields of a server error read here: its SQLSTATE, where in the statement it points, and which server routine raised it. */
interface ServerError {
  code?: string;
  message: string;
  /** 1-based, in characters of the statement sent; absent when the error points nowhere in it. */
  position?: string;
  routine?: string;
}

/** Verbs that write: refused wherever a syntax error points at them (after a WITH too). */
const WRITING_VERBS = new Set(['insert', 'update', 'delete', 'merge']);

/** Roles whose members reach the server's files or programs from a SELECT (pg_read_file, lo_export, COPY … PROGRAM). */
const SERVER_ACCESS_ROLES = ['pg_execute_server_program', 'pg_read_server_files', 'pg_write_server_files'];

/** The one line that says how to make a role `query` accepts (docs/schema.md has the full recipe). */
const READER_HINT =
  "connect as a read-only role instead, e.g. as a superuser run CREATE ROLE callsync_reader LOGIN PASSWORD '…' IN ROLE pg_read_all_data; and pass --database postgres://callsync_reader@host:5432/db (docs/schema.md, Read-only access for BI tools)";

/** Commands that are not queries: a cursor refuses them with a syntax error at their first word. */
const NOT_A_QUERY = new Set(
  'insert update delete merge create drop alter truncate grant revoke copy call do vacuum analyze analyse cluster reindex comment lock set reset begin start commit rollback end abort savepoint release prepare execute deallocate discard listen notify unlisten load refresh security import declare fetch move close checkpoint explain show reassign'.split(' '),
);

/** The word (letters) starting at `position` (1-based, in characters as the server counts them) of `sent`; '' when none. */
function wordAt(sent: string, position: number): string {
  const rest = Array.from(sent).slice(position - 1, position + 40).join('');
  return /^[A-Za-z]+/.exec(rest)?.[0].toLowerCase() ?? '';
}

/**
 * Why the server refused the DECLARE, when the reason is that the statement is not one read-only
 * query; undefined for any other error (a typo, a missing table), shown as the server words it.
 * Decided on the error's fields, never its words: a syntax error without a position is the
 * extended protocol refusing several commands (a parser error always points somewhere); one that
 * points at a command word that is not a query (the statement's first word) or at a writing verb
 * (after a WITH) is a statement that is not a query; a FEATURE_NOT_SUPPORTED raised by the DECLARE
 * itself (routine transformDeclareCursorStmt) is a data-modifying WITH, which a cursor may not hold.
 */
function notOneQuery(e: ServerError, prefix: string, text: string): CallsyncError | undefined {
  if (e.code === PG.SYNTAX_ERROR) {
    if (e.position === undefined) return new QueryError('QUERY_INVALID', ONE_STATEMENT);
    const position = Number(e.position);
    const word = wordAt(prefix + text, position);
    const first = position === Array.from(prefix + text.slice(0, firstTokenOffset(text))).length + 1;
    if ((first && NOT_A_QUERY.has(word)) || WRITING_VERBS.has(word)) return new QueryRefusedError(READ_ONLY);
  }
  if (e.code === PG.FEATURE_NOT_SUPPORTED && e.routine === 'transformDeclareCursorStmt') return new QueryRefusedError(READ_ONLY);
  return undefined;
}

/** Where the user's statement starts in `text`: past blanks and comments. */
function firstTokenOffset(text: string): number {
  let i = 0;
  for (;;) {
    const rest = text.slice(i);
    const m = /^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)/.exec(rest);
    if (!m || m[0].length === 0) return i;
    i += m[0].length;
  }
}

/**
 * PostgreSQL. The statement becomes the body of a cursor (`DECLARE … CURSOR FOR`), sent as a named
 * prepared statement: the extended protocol refuses a second statement (`select 1; commit; …`), and
 * a cursor takes a query only, never INSERT, DDL or a data-modifying WITH. It runs in a READ ONLY
 * transaction of a session whose default is read-only too, under statement_timeout, and is always
 * rolled back. Rows are fetched in batches: memory stays flat whatever the result's size.
 */
export async function streamPostgres(url: string, text: string, sink: QuerySink, opts: QueryOptions & { limit: number }): Promise<QuerySummary> {
  const { pg, queryTypes } = loadPg();
  const config: pg.ClientConfig = { connectionString: connectionString(url, { passwordEnv: opts.passwordEnv, env: opts.env }), application_name: 'callsync query', connectionTimeoutMillis: 15_000, types: queryTypes };
  const signal = opts.signal;
  if (signal?.aborted) throw new QueryInterruptedError('query: interrupted before it started');
  const client = new pg.Client(config);
  // A dropped connection surfaces as the rejected query below; the event alone must not crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw connectionError(url, err, `database ${displayUrl(url)} cannot be reached`);
  }
  let interrupted = false;
  let backendPid: number | undefined;
  // If the cancel does not end the statement within a few seconds, the connection is dropped.
  let dropTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    interrupted = true;
    dropTimer = setTimeout(() => client.connection.stream.destroy(), 5_000);
    void cancelOnServer(config, backendPid, client);
  };
  try {
    const timeoutMs = Math.round((opts.timeoutSeconds ?? DEFAULT_QUERY_TIMEOUT_SECONDS) * 1000);
    // Set here rather than in the startup packet, where an `options` parameter in the URL would
    // replace them. From PostgreSQL 14 the server also checks that the client is still there while
    // a statement runs, so a connection dropped after Ctrl-C stops the statement as well.
    await client.query(
      `set default_transaction_read_only = on; set statement_timeout = ${timeoutMs};
       select set_config('client_connection_check_interval', '2000', false) where current_setting('server_version_num')::int >= 140000`,
    );
    const who = await client.query<{ role: string; superuser: boolean; powers: string | null; pid: number }>(
      `select current_user as role, r.rolsuper as superuser, pg_backend_pid() as pid,
              (select string_agg(s.rolname, ', ' order by s.rolname) from pg_roles s
                where s.rolname = any($1::text[]) and pg_has_role(current_user, s.oid, 'MEMBER')) as powers
         from pg_roles r where r.rolname = current_user`,
      [SERVER_ACCESS_ROLES],
    );
    const me = who.rows[0]!;
    if (me.superuser) throw new QueryRefusedError(`query refuses to run as "${me.role}", a superuser (it could reach the server's files and programs); ${READER_HINT}`);
    if (me.powers) throw new QueryRefusedError(`query refuses to run as "${me.role}", a member of ${me.powers} (it could reach the server's files or programs); ${READER_HINT}`);
    backendPid = me.pid;
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();

    await client.query('begin transaction read only');
    const prefix = 'declare callsync_query no scroll cursor for ';
    try {
      await client.query({ name: 'callsync_query', text: prefix + text });
    } catch (err) {
      throw notOneQuery(err as ServerError, prefix, text) ?? err;
    }

    let columns: string[] | undefined;
    let sent = 0;
    let truncated = false;
    for (;;) {
      if (interrupted) throw new QueryInterruptedError('');
      // One row past the limit is read, to tell a result of exactly `limit` rows from a longer one.
      const want = opts.limit === 0 ? BATCH : Math.min(BATCH, opts.limit + 1 - sent);
      const res = await client.query<unknown[]>({ text: `fetch forward ${want} from callsync_query`, rowMode: 'array' });
      if (columns === undefined) {
        columns = res.fields.map((f) => f.name);
        await sink.columns(columns);
      }
      let batch = res.rows;
      if (opts.limit !== 0 && sent + batch.length > opts.limit) {
        batch = batch.slice(0, opts.limit - sent);
        truncated = true;
      }
      if (batch.length) await sink.rows(batch);
      sent += batch.length;
      if (truncated || res.rows.length < want) break;
    }
    return { rows: sent, truncated };
  } catch (err) {
    if (interrupted) throw new QueryInterruptedError('query: interrupted; the statement was cancelled on the server');
    if (err instanceof CallsyncError) throw err;
    const e = err as ServerError;
    if (e.code === PG.READ_ONLY_TRANSACTION) throw new QueryRefusedError(READ_ONLY);
    // The destination's mapError tells statement_timeout from another cancel (see there).
    const mapped = mapPostgresError(err, url);
    if (mapped?.code === 'QUERY_TIMEOUT') {
      throw new QueryError('QUERY_TIMEOUT', `query: cancelled by the server after ${opts.timeoutSeconds ?? DEFAULT_QUERY_TIMEOUT_SECONDS} s (statement_timeout); narrow the query, or raise queryTimeoutSeconds in the config`);
    }
    throw new QueryError(mapped?.code === 'QUERY_CANCELLED' ? 'QUERY_CANCELLED' : 'QUERY_INVALID', `query: ${e.message}`);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    clearTimeout(dropTimer);
    await client.query('rollback').catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/**
 * Stops the statement running on `client`'s server process: pg_cancel_backend from a second
 * connection (a role may cancel its own sessions). When that fails, the connection itself is
 * destroyed, which ends the wait here (and, from PostgreSQL 14, the statement on the server).
 */
async function cancelOnServer(config: pg.ClientConfig, pid: number | undefined, client: pg.Client): Promise<void> {
  if (pid === undefined) {
    client.connection.stream.destroy();
    return;
  }
  const canceller = new (loadPg().pg.Client)({ ...config, application_name: 'callsync query cancel', connectionTimeoutMillis: 5_000 });
  canceller.on('error', () => undefined);
  try {
    await canceller.connect();
    await canceller.query('select pg_cancel_backend($1)', [pid]);
  } catch {
    client.connection.stream.destroy();
  } finally {
    await canceller.end().catch(() => undefined);
  }
}
