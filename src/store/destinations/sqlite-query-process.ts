import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ConfigError, type SettingErrorCode } from '../../config/errors.js';
import { DEFAULT_QUERY_TIMEOUT_SECONDS, QueryError, QueryInterruptedError, QueryRefusedError, type QueryOptions, type QuerySink, type QuerySummary } from './contract.js';
import type { FromChild, ToChild } from './sqlite-query-messages.js';

/**
 * A SQLite statement of `callsync query`, run in a child process (`script`, sqlite-query-child.js).
 * better-sqlite3 runs a statement inside SQLite's C code on the calling thread, and offers no way to
 * interrupt it: in-process, Ctrl-C waited for the statement to end (minutes on a big database) and
 * then exited 130 without a word, and `queryTimeoutSeconds` could not apply. Killing the child stops
 * the statement at once; its connection was read-only, so nothing is left behind. Costs the child's
 * start (~0.1 s) per query.
 *
 * Stops: `opts.signal` (QueryInterruptedError), `opts.timeoutSeconds` (QueryError QUERY_TIMEOUT,
 * default DEFAULT_QUERY_TIMEOUT_SECONDS as on PostgreSQL). The child's own errors come back as the
 * same classes streamSqlite throws in-process.
 */
export function streamSqliteInChild(script: URL, database: string, text: string, sink: QuerySink, opts: QueryOptions & { limit: number }): Promise<QuerySummary> {
  const seconds = opts.timeoutSeconds ?? DEFAULT_QUERY_TIMEOUT_SECONDS;
  return new Promise<QuerySummary>((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(new QueryInterruptedError('query: interrupted before it started'));
      return;
    }
    // No inherited execArgv (a --cpu-prof or --inspect of this process is not the child's), stdio
    // inherited for a crash's own message, and the IPC channel for everything else.
    const child = fork(fileURLToPath(script), [], { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    // The statement's own time, as statement_timeout counts it on PostgreSQL: the clock stops while
    // a batch is being written (a slow reader, `| less`, is not the statement's time). Counting it,
    // `| (sleep 5; wc -l)` got 5,001 of 1,000,001 rows under a 3 s timeout.
    let left = seconds * 1000;
    let since = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timeUp = (): void => finish(new QueryError('QUERY_TIMEOUT', `query: stopped after ${seconds} s (queryTimeoutSeconds); narrow the query, or raise queryTimeoutSeconds in the config`));
    const clockStops = (): void => {
      clearTimeout(timer);
      left -= Date.now() - since;
    };
    const clockRuns = (): void => {
      since = Date.now();
      timer = setTimeout(timeUp, Math.max(0, left));
    };
    clockRuns();
    // This process ending first (stdout closed under `| head`: exit at once) takes the child along;
    // left alone, it ran its statement to the end.
    const orphan = (): void => void child.kill('SIGKILL');
    process.once('exit', orphan);
    const finish = (failure: Error | undefined, summary?: QuerySummary): void => {
      if (settled) return;
      settled = true;
      // Once Ctrl-C is in, whatever else ended the child (a signal to the whole group) is that.
      const err = failure && opts.signal?.aborted ? interrupted() : failure;
      clearTimeout(timer);
      process.off('exit', orphan);
      opts.signal?.removeEventListener('abort', onAbort);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (err) reject(err);
      else resolve(summary!);
    };
    const interrupted = (): QueryInterruptedError => new QueryInterruptedError('query: interrupted; the statement was stopped');
    const onAbort = (): void => finish(interrupted());
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // Sink calls are chained: a batch is written whole before the next message is looked at.
    let chain = Promise.resolve();
    child.on('message', (m: FromChild) => {
      chain = chain
        .then(async () => {
          if (settled) return;
          if (m.t === 'columns') await sink.columns(m.names);
          else if (m.t === 'rows') {
            clockStops();
            await sink.rows(m.batch);
            if (settled) return;
            clockRuns();
            child.send({ t: 'ack' } satisfies ToChild);
          } else if (m.t === 'done') finish(undefined, { rows: m.rows, truncated: m.truncated });
          else finish(errorFromChild(m));
        })
        .catch((err: unknown) => finish(err as Error));
    });
    child.on('error', (err) => finish(new QueryError('QUERY_INVALID', `query: the SQLite query process could not run (${err.message})`)));
    child.on('exit', (code, signal) => {
      // After its last message has been handled: `done` or `error` settle first.
      void chain.then(() => finish(new QueryError('QUERY_INVALID', `query: the SQLite query process ended without an answer (${signal ?? `exit ${code}`})`)));
    });
    child.send({ t: 'run', database, text, limit: opts.limit } satisfies ToChild);
  });
}

/** The error the child caught, as the class streamSqlite threw it. */
function errorFromChild(m: Extract<FromChild, { t: 'error' }>): Error {
  if (m.name === 'QueryRefusedError') return new QueryRefusedError(m.message);
  if (m.name === 'QueryError') return new QueryError(m.code === 'QUERY_TIMEOUT' || m.code === 'QUERY_CANCELLED' ? m.code : 'QUERY_INVALID', m.message);
  if (m.name === 'ConfigError') return new ConfigError(m.message, m.code as SettingErrorCode);
  const err = new Error(m.message);
  err.name = m.name;
  return err;
}
