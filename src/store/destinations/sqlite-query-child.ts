/**
 * The process a SQLite `callsync query` statement runs in (started by sqlite-query-process.ts; an
 * entry of its own in the CLI's bundle). It runs the statement read-only exactly as in-process
 * (streamSqlite) and sends the columns, each batch of rows (waiting for the parent's ack) and the
 * end or the error; the parent kills it to stop the statement.
 */
import { CallsyncError } from '../../config/errors.js';
import { streamSqlite } from './sqlite-query.js';
import type { FromChild, ToChild } from './sqlite-query-messages.js';

function send(m: FromChild): Promise<void> {
  return new Promise((resolve, reject) => process.send!(m, undefined, undefined, (err) => (err ? reject(err) : resolve())));
}

let acked: (() => void) | undefined;
process.on('message', (m: ToChild) => {
  if (m.t === 'ack') {
    acked?.();
    return;
  }
  void run(m);
});

async function run(m: Extract<ToChild, { t: 'run' }>): Promise<void> {
  try {
    const summary = await streamSqlite(m.database, m.text, {
      columns: (names) => send({ t: 'columns', names }),
      rows: async (batch) => {
        const ack = new Promise<void>((resolve) => (acked = resolve));
        await send({ t: 'rows', batch });
        await ack;
      },
    }, m.limit);
    await send({ t: 'done', rows: summary.rows, truncated: summary.truncated });
  } catch (err) {
    const e = err as Error;
    await send({ t: 'error', name: e.name, code: err instanceof CallsyncError ? err.code : '', message: e.message });
  }
  process.disconnect();
}
