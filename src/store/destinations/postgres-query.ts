import pg from 'pg';
import { ConfigError } from '../../config/errors.js';
import {
  DEFAULT_QUERY_TIMEOUT_SECONDS,
  QUERY_BATCH as BATCH,
  ONE_STATEMENT,
  QueryInterruptedError,
  QueryRefusedError,
  READ_ONLY,
  type QueryOptions,
  type QuerySink,
  type QuerySummary,
} from './contract.js';
import { connectionProblem, connectionString, displayUrl, PG_TYPES } from './postgres-connection.js';

/** The SQLSTATEs of the PostgreSQL errors given a meaning here. */
const PG = {
  SYNTAX_ERROR: '42601',
  FEATURE_NOT_SUPPORTED: '0A000',
  READ_ONLY_TRANSACTION: '25006',
  QUERY_CANCELED: '57014',
} as const;

/** Roles whose members reach the server's files or programs from a SELECT (pg_read_file, lo_export, COPY … PROGRAM). */
const SERVER_ACCESS_ROLES = ['pg_execute_server_program', 'pg_read_server_files', 'pg_write_server_files'];

/** The one line that says how to make a role `query` accepts (docs/schema.md has the full recipe). */
const READER_HINT =
  "connect as a read-only role instead, e.g. as a superuser run CREATE ROLE callsync_reader LOGIN PASSWORD '…' IN ROLE pg_read_all_data; and pass --database postgres://callsync_reader@host:5432/db (docs/schema.md, Read-only access for BI tools)";

/** Commands that are not queries: a cursor refuses them with a syntax error at their first word. */
const NOT_A_QUERY = new Set(
  'insert update delete merge create drop alter truncate grant revoke copy call do vacuum analyze analyse cluster reindex comment lock set reset begin start commit rollback end abort savepoint release prepare execute deallocate discard listen notify unlisten load refresh security import declare fetch move close checkpoint explain show reassign'.split(' '),
);

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
  const config: pg.ClientConfig = { connectionString: connectionString(url, { passwordEnv: opts.passwordEnv, env: opts.env }), application_name: 'callsync query', connectionTimeoutMillis: 15_000, types: PG_TYPES };
  const signal = opts.signal;
  if (signal?.aborted) throw new QueryInterruptedError('query: interrupted before it started');
  const client = new pg.Client(config);
  // A dropped connection surfaces as the rejected query below; the event alone must not crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw new ConfigError(connectionProblem(url, err) ?? `database ${displayUrl(url)} cannot be reached (${(err as Error).message})`);
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
      const e = err as { code?: string; message: string; position?: string };
      if (e.code === PG.SYNTAX_ERROR && /multiple commands/.test(e.message)) throw new ConfigError(ONE_STATEMENT);
      // A syntax error at the statement's first word, a command that is not a query (INSERT, CREATE,
      // SET, …), or at a writing verb after a WITH. Other syntax errors (a typo) are shown as they are.
      const start = firstTokenOffset(text);
      const first = /^[A-Za-z]+/.exec(text.slice(start))?.[0].toLowerCase() ?? '';
      if (e.code === PG.SYNTAX_ERROR && ((Number(e.position) === prefix.length + start + 1 && NOT_A_QUERY.has(first)) || /at or near "(insert|update|delete|merge)"/i.test(e.message))) {
        throw new QueryRefusedError(READ_ONLY);
      }
      if (e.code === PG.FEATURE_NOT_SUPPORTED && /data-modifying/.test(e.message)) throw new QueryRefusedError(READ_ONLY);
      throw err;
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
    if (err instanceof QueryRefusedError || err instanceof ConfigError) throw err;
    const e = err as { code?: string; message: string };
    if (e.code === PG.READ_ONLY_TRANSACTION) throw new QueryRefusedError(READ_ONLY);
    if (e.code === PG.QUERY_CANCELED && /statement timeout/.test(e.message)) {
      throw new ConfigError(`query: cancelled by the server after ${opts.timeoutSeconds ?? DEFAULT_QUERY_TIMEOUT_SECONDS} s (statement_timeout); narrow the query, or raise queryTimeoutSeconds in the config`);
    }
    throw new ConfigError(`query: ${e.message}`);
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
  const canceller = new pg.Client({ ...config, application_name: 'callsync query cancel', connectionTimeoutMillis: 5_000 });
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
