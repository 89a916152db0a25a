import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import type { Store } from './connection.js';

// int8 (count(*), sums of integers, bigint columns) and numeric arrive as strings by default. Every
// such value here is a count, a unix time or minutes, well inside a double's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

/** The URL without its password, for messages. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/** Opens a PostgreSQL database through Kysely's Postgres dialect and a small pg pool. */
export function openPostgresStore(url: string): Store {
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: 10_000 });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Foreign-key checks run a plan that each connection prepares once, on first use, and keeps. On a
  // first sync that is while `calls` is empty, so the plan scans the table, and every participant
  // row written later scans it again: the sync slowed down quadratically (5,000 calls: 8.1 s, of
  // which 5 s in participant inserts growing from 14 to 150 ms per 256 rows). Planning each check
  // for the table as it is now keeps them index lookups (3.1 s, flat). Queued before any query.
  pool.on('connect', (client) => {
    client.query('set plan_cache_mode = force_custom_plan').catch(() => {});
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, path: displayUrl(url), dialect: 'postgres', close: () => db.destroy() };
}
