import { createRequire } from 'node:module';
import type pg from 'pg';
import { ConfigError } from '../../config/errors.js';
import { errorCode, errorMessage, exactInteger, RawJson, type MappedDatabaseError } from './contract.js';

/**
 * How callsync talks to a PostgreSQL server: the URL (shown without its password, completed with
 * one from databasePasswordEnv), the type parsers every connection uses, and the server's errors
 * as our codes. Shared by the destination (postgres.ts) and its read-only query runner.
 */

let loaded: { pg: typeof pg; types: pg.CustomTypesConfig; queryTypes: pg.CustomTypesConfig } | undefined;

/**
 * The pg package, loaded the first time a PostgreSQL destination is used: a process on SQLite (the
 * default, and every test and benchmark sync) does not spend the ~30 ms of CPU it takes to load.
 * `types`: int8 (count(*), sums of integers, bigint columns) and numeric arrive as strings by
 * default. Every such value here is a count, a unix time or minutes, well inside a double's exact
 * range. Given to each pool and client we make, not set on pg's global registry: another pg user in
 * the same process keeps pg's defaults. `queryTypes`, for `callsync query`, whose statements are
 * anyone's: an integer (int8, or a numeric without a fraction) a double cannot hold exactly is a
 * bigint (exactInteger), not a number one off; a numeric a double would round, and json/jsonb, keep
 * their text (RawJson); int8[] and numeric[] elements are read the same way.
 */
export function loadPg(): { pg: typeof pg; types: pg.CustomTypesConfig; queryTypes: pg.CustomTypesConfig } {
  if (loaded) return loaded;
  const mod = createRequire(import.meta.url)('pg') as typeof pg;
  const INT8 = mod.types.builtins.INT8;
  const NUMERIC = mod.types.builtins.NUMERIC;
  const types: pg.CustomTypesConfig = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8 || oid === NUMERIC ? (v: string) => Number(v) : mod.types.getTypeParser(oid, format)) as typeof mod.types.getTypeParser,
  };
  const { JSON: JSON_OID, JSONB } = mod.types.builtins;
  const int8 = (v: string): number | bigint => exactInteger(BigInt(v));
  // pg's own array parser for int8[] splits an array's text into element strings (and nulls).
  const elements = (mod.types.getTypeParser as (oid: number) => (text: string) => unknown)(INT8_ARRAY);
  const arrayOf = (element: (v: string) => unknown) => (v: string): unknown => deepMap(elements(v), element);
  const queryTypes: pg.CustomTypesConfig = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
      if (oid === INT8) return int8;
      if (oid === NUMERIC) return numericValue;
      if (oid === JSON_OID || oid === JSONB) return (v: string) => new RawJson(v);
      if (oid === INT8_ARRAY) return arrayOf(int8);
      if (oid === NUMERIC_ARRAY) return arrayOf(numericValue);
      return mod.types.getTypeParser(oid, format);
    }) as typeof mod.types.getTypeParser,
  };
  return (loaded = { pg: mod, types, queryTypes });
}

/** int8[] and numeric[]: pg parses their elements to strings (its array parser for these OIDs). */
const INT8_ARRAY = 1016;
const NUMERIC_ARRAY = 1231;

/**
 * A numeric as `query` prints it: an integer exactly (exactInteger); a fraction as a number when
 * the double prints the same digits, else as its own text (RawJson); NaN and ±Infinity as numbers.
 */
function numericValue(v: string): number | bigint | RawJson {
  if (/^-?\d+$/.test(v)) return exactInteger(BigInt(v));
  const n = Number(v);
  if (!Number.isFinite(n) || sameDecimal(String(n), v)) return n;
  return new RawJson(v);
}

/** Whether two decimal texts state the same number (trailing fraction zeros aside: 2.50 is 2.5). */
function sameDecimal(a: string, b: string): boolean {
  const trim = (t: string): string => (t.includes('.') ? t.replace(/0+$/, '').replace(/\.$/, '') : t);
  return trim(a) === trim(b);
}

/** An array (of arrays) with `f` applied to each non-null element. */
function deepMap(v: unknown, f: (s: string) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => deepMap(x, f));
  return v === null ? null : f(v as string);
}

const MASK = '***';
const NO_HOST = '___callsync_no_host___';

/** `database` values that name a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

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
  // Checked whether or not a password is added: pg's own parser threw a TypeError on such a URL
  // ("postgres://u:pw@[::1:5432/db"), an internal error with a stack trace (probe round 21).
  const parsed = parseUrl(url);
  if (!parsed) throw new ConfigError('database: not a valid postgres:// URL; write it as postgres://user@host:5432/database');
  if (!auth.passwordEnv) return url;
  const { u } = parsed;
  if (u.password || [...u.searchParams.keys()].some((k) => k.toLowerCase() === 'password')) return url;
  const password = auth.env?.[auth.passwordEnv];
  if (!password) throw new ConfigError(`database ${displayUrl(url)}: environment variable ${auth.passwordEnv} (databasePasswordEnv) is not set; export the database password in it`);
  // pg decodes the URL's password with decodeURIComponent; the setter alone would leave a % as is.
  u.password = encodeURIComponent(password);
  return parsed.text();
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

/** The SQLSTATEs given a meaning here (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
export const SQLSTATE = {
  INVALID_PASSWORD: '28P01',
  INVALID_AUTHORIZATION: '28000',
  INVALID_CATALOG_NAME: '3D000',
  TOO_MANY_CONNECTIONS: '53300',
  QUERY_CANCELED: '57014',
  ADMIN_SHUTDOWN: '57P01',
  CANNOT_CONNECT_NOW: '57P03',
  READ_ONLY_TRANSACTION: '25006',
  LOCK_NOT_AVAILABLE: '55P03',
  DISK_FULL: '53100',
} as const;

/**
 * A pg or socket error as our code, message and hint; `database` (the URL) names the server in the
 * message, and is needed for socket errors to count. pg's texts name the user or the database, never the password. Undefined for any other error.
 */
export function mapPostgresError(err: unknown, database?: string): MappedDatabaseError | undefined {
  const code = errorCode(err);
  const text = errorMessage(err);
  const at = database ? ` at ${serverOf(database)}` : '';
  // A socket error means "the server cannot be reached" only when we know it came from connecting to
  // one (`database` given): the same codes come from HTTP. pg's own connection timeout
  // ("Connection terminated due to connection timeout") has no code and no class of its own: its
  // words are all pg gives, so they are read here, the one place that reads pg's errors.
  const reason =
    database === undefined ? undefined : (NETWORK_REASONS[code] ?? (code === '' && /timeout/i.test(text) && /connect/i.test(text) ? 'timed out' : undefined));
  if (reason) return { code: 'DB_UNREACHABLE', message: `cannot reach the PostgreSQL database${at} (${reason})`, hint: 'check it is running and the URL in `database` (or --database)' };
  switch (code) {
    case SQLSTATE.INVALID_PASSWORD:
    case SQLSTATE.INVALID_AUTHORIZATION:
      return { code: 'DB_AUTH', message: `the PostgreSQL server${at} refused the login (${text})`, hint: 'check the user in the URL and its password (databasePasswordEnv, PGPASSWORD or ~/.pgpass)' };
    case SQLSTATE.INVALID_CATALOG_NAME:
      return { code: 'DB_NOT_FOUND', message: `the PostgreSQL server${at} has no such database (${text})`, hint: 'create it (createdb) or fix the URL in `database`' };
    case SQLSTATE.TOO_MANY_CONNECTIONS:
      return { code: 'DB_TOO_MANY_CONNECTIONS', message: `the PostgreSQL server${at} has no free connection (${text})`, hint: 'close idle clients or raise max_connections, then run again' };
    case SQLSTATE.ADMIN_SHUTDOWN:
    case SQLSTATE.CANNOT_CONNECT_NOW:
      return { code: 'DB_UNREACHABLE', message: `the PostgreSQL server${at} is shutting down or starting (${text})`, hint: 'run again once it is up' };
    case SQLSTATE.QUERY_CANCELED:
      // One SQLSTATE for both causes; the server's text is the only thing that tells them apart.
      return text.includes('statement timeout')
        ? { code: 'QUERY_TIMEOUT', message: `the PostgreSQL server cancelled a statement that ran past statement_timeout (${text})`, hint: 'narrow the query, or raise the timeout' }
        : { code: 'QUERY_CANCELLED', message: `the PostgreSQL server cancelled the statement (${text})`, hint: 'run it again if nobody meant to stop it' };
    case SQLSTATE.READ_ONLY_TRANSACTION:
      return { code: 'DB_READ_ONLY', message: `the PostgreSQL session${at} is read-only (${text})`, hint: 'connect as a role that may write, to a primary server rather than a standby' };
    case SQLSTATE.LOCK_NOT_AVAILABLE:
      return { code: 'DB_LOCKED', message: `a PostgreSQL lock${at} is held by another session (${text})`, hint: 'try again when it is released' };
    case SQLSTATE.DISK_FULL:
      return { code: 'DB_FULL', message: `the PostgreSQL server${at} is out of disk space (${text})`, hint: 'free some disk space on the server and run again' };
    default:
      return undefined;
  }
}

/** The codes that mean the connection itself failed (as opposed to a statement on it). */
const CONNECT_CODES = ['DB_UNREACHABLE', 'DB_AUTH', 'DB_NOT_FOUND'] as const;

/**
 * A failure to connect (the server is down or unreachable, the login or the database is refused)
 * as one line naming the server and what to check, a ConfigError carrying the mapped code (the
 * `database` setting cannot be used as given); `otherwise` (the same with pg's words) for any other error.
 */
export function connectionError(url: string, err: unknown, otherwise: string): ConfigError {
  const m = mapPostgresError(err, url);
  const code = CONNECT_CODES.find((c) => c === m?.code);
  return m && code ? new ConfigError(`${m.message}: ${m.hint}`, code) : new ConfigError(`${otherwise} (${errorMessage(err)})`);
}
