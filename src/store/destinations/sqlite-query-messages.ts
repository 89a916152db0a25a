/**
 * What `callsync query` and its SQLite child process (sqlite-query-child.ts, sqlite-query-process.ts)
 * say to each other over the IPC channel (advanced serialization: BLOBs and big integers pass whole).
 */

/** Parent → child: the one statement to run; then an `ack` after each batch of rows it has written. */
export type ToChild = { t: 'run'; database: string; text: string; limit: number } | { t: 'ack' };

/** Child → parent. A `rows` batch waits for the parent's `ack` (the parent's stdout sets the pace). */
export type FromChild =
  | { t: 'columns'; names: string[] }
  | { t: 'rows'; batch: unknown[][] }
  | { t: 'done'; rows: number; truncated: boolean }
  | { t: 'error'; name: string; code: string; message: string };
