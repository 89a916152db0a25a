import type { Dialect, DialectAdapter, Kysely } from 'kysely';
import type { DialectSql } from '../../../migrations/dialect.js';
import { CallsyncError, type DatabaseErrorCode } from '../../config/errors.js';
import type { Database } from '../schema.js';

export type { DatabaseErrorCode } from '../../config/errors.js';

/**
 * What every destination (a kind of database callsync writes to) provides. The rest of the code
 * asks a destination what it can do (its capability flags) and never tests which one it is: adding
 * one is a new file in this folder that exports a `Destination`, plus its line in index.ts.
 */

export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  readonly db: Kysely<Database>;
  /** The database as it may be shown: a file path, or a postgres URL without its password. */
  readonly path: string;
  readonly dialect: DialectName;
  close(): Promise<void>;
}

export interface OpenOptions {
  readonly?: boolean;
  /** SQLite: how long a writer waits for another process's lock. */
  busyTimeoutMs?: number;
  /** The config's databasePasswordEnv: the password of a URL without one. */
  passwordEnv?: string | undefined;
  /** Where passwordEnv is read (config's readEnvironment()): the store never reads the environment itself. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * What a destination can do; callers branch on these, never on the destination's name. A flag is
 * declared only when some caller reads it: one nobody reads is a promise nothing checks.
 */
export interface Capabilities {
  /** DDL runs inside a transaction, so a migration is applied (and recorded) all or nothing. */
  readonly transactionalDdl: boolean;
  /**
   * Several processes may write at once. When true, workers share the apps (one lease per app);
   * when false, a sync takes the one database lease and a second process skips.
   */
  readonly concurrentWriters: boolean;
  /** A running statement can be cancelled on the server (Ctrl-C, statement_timeout). */
  readonly serverSideCancel: boolean;
  /** The database is a local file: it exists or not before anything connects. */
  readonly localFile: boolean;
  /** Serial ids come from sequences that must be moved past ids inserted explicitly (restartSerial). */
  readonly sequences: boolean;
  /** Every row has a stable rowid in insertion order, so a table is paged without knowing its key (copy's source). */
  readonly rowid: boolean;
  /** It logs in with a password, so the config's databasePasswordEnv applies. */
  readonly passwordLogin: boolean;
}

/** A native error as we say it: a stable code (config/errors.ts lists them), what happened, what to do next. */
export interface MappedDatabaseError {
  code: DatabaseErrorCode;
  message: string;
  hint: string;
}

/** A native database error after its destination's mapError: the native error is kept as `cause`. */
export class DatabaseError extends CallsyncError {
  declare readonly code: DatabaseErrorCode;
  declare readonly hint: string;
  constructor(mapped: MappedDatabaseError, cause?: unknown) {
    super(mapped.code, mapped.message, mapped.hint);
    this.name = 'DatabaseError';
    if (cause !== undefined) this.cause = cause;
  }
}

export interface QueryOptions {
  /** Rows returned at most (one more is read to tell whether there were more); 0: no cap. */
  limit?: number;
  /** The server cancels a statement running longer than this (destinations with serverSideCancel). */
  timeoutSeconds?: number;
  /** The config's databasePasswordEnv, for a URL without a password. */
  passwordEnv?: string | undefined;
  /** Where passwordEnv is read (config's readEnvironment()). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting cancels the statement on the server, then the query ends with QueryInterruptedError. */
  signal?: AbortSignal;
  /**
   * A destination without serverSideCancel (SQLite) runs the statement in a child process started
   * from this script (sqlite-query-child.js, built beside the CLI), so that `signal` and
   * `timeoutSeconds` stop it: in this process nothing can stop a statement inside SQLite's C code.
   */
  isolateIn?: URL | undefined;
}

/**
 * An integer of a query's result as a sink gets it: a number where a double holds it exactly, else a
 * bigint (9007199254740993 printed as …992 on both databases: probe round 21 #6).
 */
export function exactInteger(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/**
 * A value of a query's result whose JSON text is exactly `text`: a PostgreSQL numeric a double
 * cannot hold (9007199254740993.5 came out as …994), a json or jsonb value (printed as
 * "[object Object]" in a table, its big numbers rounded in JSON: probe round 22). Output writes the
 * text itself, in JSON as a value and in a table or CSV as it stands.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * Where the rows go as they arrive: `columns` once, before any `rows`; a returned promise is awaited
 * (backpressure). Values are what the driver gives, integers beyond a double's exact range as
 * bigint, and values no JS value states exactly as RawJson.
 */
export interface QuerySink {
  columns(names: string[]): void | Promise<void>;
  rows(batch: unknown[][]): void | Promise<void>;
}

export interface QuerySummary {
  rows: number;
  truncated: boolean;
}

/** A statement refused because it would change the database, or a connection refused because it could. */
export class QueryRefusedError extends CallsyncError {
  constructor(message: string) {
    super('QUERY_NOT_READ_ONLY', message);
    this.name = 'QueryRefusedError';
  }
}

/** The query was stopped by a signal (Ctrl-C); on PostgreSQL the server statement was cancelled. */
export class QueryInterruptedError extends CallsyncError {
  constructor(message: string) {
    super('QUERY_INTERRUPTED', message);
    this.name = 'QueryInterruptedError';
  }
}

/**
 * `callsync query` could not run the statement: not one statement, an SQL error (the database's own
 * words), or the server cancelled it (statement_timeout, or another session).
 */
export class QueryError extends CallsyncError {
  constructor(code: 'QUERY_INVALID' | 'QUERY_TIMEOUT' | 'QUERY_CANCELLED', message: string) {
    super(code, message);
    this.name = 'QueryError';
  }
}

export const READ_ONLY = 'query is read-only: only one SELECT (or WITH … SELECT, VALUES, TABLE) runs, and this statement would not be one, so it was not run';
export const ONE_STATEMENT = 'query: give one SQL statement at a time';
/** Rows fetched per round trip (PostgreSQL) or handed to the sink at once (SQLite). */
export const QUERY_BATCH = 1000;
export const DEFAULT_QUERY_LIMIT = 10_000;
export const DEFAULT_QUERY_TIMEOUT_SECONDS = 60;

export interface Destination {
  readonly name: DialectName;
  /** How a person names it in messages. */
  readonly label: string;
  /** What a `database` setting for it looks like, for the message refusing an unknown one: "a postgres:// URL". */
  readonly settingForm: string;
  readonly capabilities: Capabilities;
  /** The SQL and DDL fragments that differ between destinations (the migrations use them). */
  readonly sql: DialectSql;
  /** True when this destination takes the `database` setting (a URL scheme, or a file path). */
  accepts(database: string): boolean;
  /** True when a Kysely instance was opened on this destination (its adapter). */
  ownsAdapter(adapter: DialectAdapter): boolean;
  /** False when the database is known to be missing (a file not there yet); a server says so only when reached. */
  exists(database: string): boolean;
  /** The setting as it may be shown anywhere: never a password. */
  display(database: string): string;
  /** The Kysely dialect for the setting; a connection is made only when the first query runs. */
  createDialect(database: string, opts?: OpenOptions): Dialect;
  /** What is wrong with the setting, found without connecting (a password variable that is unset); [] when nothing. */
  settingProblems(database: string, opts?: OpenOptions): string[];
  /** Moves a serial column's sequence past the largest id in the table (after ids were copied in); a no-op without sequences. */
  restartSerial(db: Kysely<Database>, table: string, column: string): Promise<void>;
  /** Opens the database (a server is reached once, so a failure is one clear line). */
  open(database: string, opts?: OpenOptions): Promise<Store>;
  /** Runs one statement on a read-only connection, streaming at most `limit` rows (limit already checked). */
  streamReadOnlyQuery(database: string, text: string, sink: QuerySink, opts: QueryOptions & { limit: number }): Promise<QuerySummary>;
  /**
   * Our code, message and hint for one of its native errors; undefined for any other error. The one
   * place that reads a driver's errors: callers get a DatabaseError (index.ts, toDatabaseError).
   */
  mapError(err: unknown, database?: string): MappedDatabaseError | undefined;
}

/** The `code` of an error object, when it has a string one. */
export function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** The `message` of an error object, when it has one. */
export function errorMessage(err: unknown): string {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(err);
}
