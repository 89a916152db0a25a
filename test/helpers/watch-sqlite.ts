import { setTimeout as delay } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';

/**
 * `query`'s `n` on a SQLite file another process is writing, read through a connection of its own;
 * 0 while the file or its tables do not exist yet.
 */
export function countIn(path: string, query: string): number {
  try {
    const db = new SqliteDatabase(path, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare(query).get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/** Polls `check` every 10 ms until it holds; throws naming `what` after 30 s. */
export async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}
