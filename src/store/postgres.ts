import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../config/errors.js';
import type { Database } from './schema.js';
import type { Store } from './connection.js';

// int8 (count(*), sums of integers, bigint columns) and numeric arrive as strings by default. Every
// such value here is a count, a unix time or minutes, well inside a double's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

const MASK = '***';
const NO_HOST = '___callsync_no_host___';

/**
 * A postgres:// URL as a WHATWG URL, and back. pg also takes an empty host (`postgres://user@/db?host=/run/postgresql`,
 * a Unix socket), which URL refuses: a placeholder host stands in for it, as pg-connection-string does.
 */
function parseUrl(url: string): { u: URL; text(): string } | undefined {
  for (const [text, back] of [[url, (s: string) => s], [url.replace('@/', `@${NO_HOST}/`), (s: string) => s.replace(`@${NO_HOST}/`, '@/')]] as const) {
    try {
      const u = new URL(text);
      return { u, text: () => back(u.toString()) };
    } catch {
      // the next form
    }
  }
  return undefined;
}

/**
 * The URL without its password, for messages: `postgres://user:***@host/db`. A `password=` query
 * parameter (pg reads one) is masked too; a URL that does not parse is not shown at all.
 */
export function displayUrl(url: string): string {
  const parsed = parseUrl(url);
  if (!parsed) return 'postgres://(unparseable URL)';
  const { u } = parsed;
  if (u.password) u.password = MASK;
  for (const key of [...u.searchParams.keys()]) if (/^(ssl)?password$/i.test(key)) u.searchParams.set(key, MASK);
  return parsed.text();
}

/**
 * A database as it may be shown anywhere (messages, logs, the HTML report): a postgres:// URL
 * without its password, a SQLite path as it is.
 */
export function maskDatabaseUrl(database: string): string {
  return /^postgres(ql)?:\/\//i.test(database) ? displayUrl(database) : database;
}

/** Where the password of a postgres:// URL without one comes from. */
export interface PostgresAuth {
  /** The config's `databasePasswordEnv`: the variable holding the password. */
  passwordEnv?: string | undefined;
  /** The environment to read it from: the CLI passes config's readEnvironment(); without one, the variable reads as unset. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The URL pg connects with. A password in the URL itself wins; else the one in the variable
 * `databasePasswordEnv` names (refused with one line when that variable is unset, rather than
 * failing later as "password authentication failed"); else none, and pg reads PGPASSWORD (then
 * ~/.pgpass) as libpq does. The result may hold the password: give it to pg only, never show it.
 */
export function connectionString(url: string, auth: PostgresAuth = {}): string {
  if (!auth.passwordEnv) return url;
  const parsed = parseUrl(url);
  if (!parsed) throw new ConfigError('database: not a valid postgres:// URL; write it as postgres://user@host:5432/database');
  const { u } = parsed;
  if (u.password || [...u.searchParams.keys()].some((k) => k.toLowerCase() === 'password')) return url;
  const password = auth.env?.[auth.passwordEnv];
  if (!password) throw new ConfigError(`database ${displayUrl(url)}: environment variable ${auth.passwordEnv} (databasePasswordEnv) is not set; export the database password in it`);
  // pg decodes the URL's password with decodeURIComponent; the setter alone would leave a % as is.
  u.password = encodeURIComponent(password);
  return parsed.text();
}

/**
 * Opens a PostgreSQL database through Kysely's Postgres dialect and a small pg pool; the password
 * as `connectionString` finds it.
 */
export function openPostgresStore(url: string, auth: PostgresAuth = {}): Store {
  const pool = new pg.Pool({ connectionString: connectionString(url, auth), max: 10, idleTimeoutMillis: 10_000 });
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

/** Socket error codes, as a person reads them. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
  ENOENT: 'no such socket',
};

/** host:port of a postgres:// URL (5432 by default; a Unix socket by its folder). */
function serverOf(url: string): string {
  const parsed = parseUrl(url);
  if (!parsed) return 'postgres://(unparseable URL)';
  const { u } = parsed;
  if (u.hostname === NO_HOST || u.hostname === '') return `the Unix socket in ${u.searchParams.get('host') ?? '(default folder)'}`;
  return `${u.hostname}:${u.port || '5432'}`;
}

/**
 * One line for a failure to connect (the server is down or unreachable, the login or the database
 * is refused), naming the server and what to check; undefined for any other error. pg's texts
 * name the user or the database, never the password.
 */
export function connectionProblem(url: string, err: unknown): string | undefined {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const text = typeof e.message === 'string' ? e.message : '';
  const at = serverOf(url);
  const reason = NETWORK_REASONS[code] ?? (/timeout/i.test(text) && /connect/i.test(text) ? 'timed out' : undefined);
  if (reason) return `cannot reach the PostgreSQL database at ${at} (${reason}): check it is running and the URL in \`database\` (or --database)`;
  if (code === '28P01' || code === '28000') return `the PostgreSQL server at ${at} refused the login (${text}): check the user in the URL and its password (databasePasswordEnv, PGPASSWORD or ~/.pgpass)`;
  if (code === '3D000') return `the PostgreSQL server at ${at} has no such database (${text}): create it (createdb) or fix the URL in \`database\``;
  return undefined;
}

/**
 * Connects once before the store is used: a server that is down, a refused login or a missing
 * database is one line naming host and port (a ConfigError, exit 2), instead of surfacing as the
 * first query's failure ("migration (unknown) failed: connect ECONNREFUSED").
 */
export async function assertPostgresReachable(url: string, auth: PostgresAuth = {}): Promise<void> {
  const client = new pg.Client({ connectionString: connectionString(url, auth), connectionTimeoutMillis: 15_000, application_name: 'callsync check' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw new ConfigError(connectionProblem(url, err) ?? `database ${displayUrl(url)}: cannot connect (${(err as Error).message})`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
