import { Kysely, PostgresAdapter, PostgresDialect, sql } from 'kysely';
import type { DialectSql } from '../../../migrations/dialect.js';
import type { Database } from '../schema.js';
import type { Destination, OpenOptions, Store } from './contract.js';
import { connectionError, connectionString, displayUrl, isPostgresUrl, loadPg, mapPostgresError, type PostgresAuth } from './postgres-connection.js';
import { streamPostgres } from './postgres-query.js';

export { connectionError, connectionString, displayUrl, type PostgresAuth } from './postgres-connection.js';

/**
 * Kysely's Postgres dialect over a small pg pool; the password as `connectionString` finds it. No
 * connection is made until the first query.
 */
function createPostgresDialect(url: string, auth: PostgresAuth = {}): PostgresDialect {
  const { pg, types } = loadPg();
  const pool = new pg.Pool({ connectionString: connectionString(url, auth), max: 10, idleTimeoutMillis: 10_000, types });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Foreign-key checks run a plan that each connection prepares once, on first use, and keeps. On a
  // first sync that is while `calls` is empty, so the plan scans the table, and every participant
  // row written later scans it again: the sync slowed down quadratically (5,000 calls: 8.1 s, of
  // which 5 s in participant inserts growing from 14 to 150 ms per 256 rows). Planning each check
  // for the table as it is now keeps them index lookups (3.1 s, flat). Queued before any query.
  pool.on('connect', (client) => {
    // A connection checked out and idle between queries (an app lock's session: app-lock.ts) that the
    // server ends emits 'error' with no listener of the pool's: unheard, it killed the process
    // (probe67 F1). Its next query fails instead, which its user handles.
    client.on('error', () => undefined);
    client.query('set plan_cache_mode = force_custom_plan').catch(() => {});
  });
  return new PostgresDialect({ pool });
}

/** A PostgreSQL database as a Store (no connection is made here: see assertPostgresReachable). */
export function openPostgresStore(url: string, auth: PostgresAuth = {}): Store {
  const db = new Kysely<Database>({ dialect: createPostgresDialect(url, auth) });
  return { db, path: displayUrl(url), dialect: 'postgres', close: () => db.destroy() };
}

/**
 * Connects once before the store is used: a server that is down, a refused login or a missing
 * database is one line naming host and port (a ConfigError, exit 2), instead of surfacing as the
 * first query's failure ("migration (unknown) failed: connect ECONNREFUSED").
 */
export async function assertPostgresReachable(url: string, auth: PostgresAuth = {}): Promise<void> {
  const { pg, types } = loadPg();
  const client = new pg.Client({ connectionString: connectionString(url, auth), connectionTimeoutMillis: 15_000, application_name: 'callsync check', types });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw connectionError(url, err, `database ${displayUrl(url)}: cannot connect`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const postgresSql: DialectSql = {
  day: (c) => `to_char(to_timestamp(${c}) at time zone 'UTC', 'YYYY-MM-DD')`,
  month: (c) => `to_char(to_timestamp(${c}) at time zone 'UTC', 'YYYY-MM')`,
  real: (e) => `cast(${e} as double precision)`,
  idType: 'bigserial',
  sharedWriters: true,
  autoIncrement: (c) => c,
};

/** A PostgreSQL server: many writers, roles, server-side cancel. */
export const postgres: Destination = {
  name: 'postgres',
  label: 'PostgreSQL',
  settingForm: 'a postgres:// URL',
  capabilities: {
    transactionalDdl: true,
    concurrentWriters: true,
    serverSideCancel: true,
    localFile: false,
    sequences: true,
    rowid: false,
    passwordLogin: true,
  },
  sql: postgresSql,
  accepts: isPostgresUrl,
  ownsAdapter: (adapter) => adapter instanceof PostgresAdapter,
  display: displayUrl,
  // Whether the database exists is known only once the server is reached (open says so in one line).
  exists: () => true,
  createDialect: (database, opts: OpenOptions = {}) => createPostgresDialect(database, { passwordEnv: opts.passwordEnv, env: opts.env }),
  settingProblems(database, opts: OpenOptions = {}) {
    try {
      // Throws, naming the variable only, when databasePasswordEnv is set and its variable is not.
      connectionString(database, { passwordEnv: opts.passwordEnv, env: opts.env });
      return [];
    } catch (err) {
      return [(err as Error).message];
    }
  },
  async restartSerial(db, table, column) {
    await sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce((select max(${sql.ref(column)}) from ${sql.table(table)}), 0) + 1, false)`.execute(db);
  },
  async open(database, opts: OpenOptions = {}) {
    await assertPostgresReachable(database, { passwordEnv: opts.passwordEnv, env: opts.env });
    return openPostgresStore(database, { passwordEnv: opts.passwordEnv, env: opts.env });
  },
  streamReadOnlyQuery: streamPostgres,
  mapError: mapPostgresError,
};
