/**
 * The process a SQLite `callsync query` statement runs in (started by sqlite-query-process.ts; an
 * entry of its own in the CLI's bundle). It runs the statement read-only exactly as in-process
 * (streamSqlite) and sends the columns, each batch of rows (waiting for the parent's ack) and the
 * end or the error; the parent kills it to stop the statement.
 */
import { Worker } from 'node:worker_threads';
import { CallsyncError } from '../../config/errors.js';
import { streamSqlite } from './sqlite-query.js';
import type { FromChild, ToChild } from './sqlite-query-messages.js';

// Ctrl-C on a terminal signals the whole process group: left to the default, this process died
// with the parent, which then reported a failed query instead of an interrupted one. The parent
// decides, and kills this process.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);

// A parent killed outright (SIGKILL, a closed terminal's SIGHUP) cannot kill this process, which
// then ran its statement to the end under init, at full CPU. This process cannot notice while it is
// inside the statement; a thread of its own can: once the parent is gone, it kills the process.
// Unreferenced: it does not keep the process alive once the statement is done.
new Worker(
  `const { workerData } = require('node:worker_threads');
   setInterval(() => { if (process.ppid !== workerData) process.kill(process.pid, 'SIGKILL'); }, 250);`,
  { eval: true, workerData: process.ppid },
).unref();

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
