import type { DialectAdapter, Kysely } from 'kysely';
import { ConfigError, InternalError } from '../../config/errors.js';
import { DatabaseError, type Destination, type MappedDatabaseError, type OpenOptions, type Store } from './contract.js';
import { postgres } from './postgres.js';
import { openSqliteStore, sqlite } from './sqlite.js';

export { DatabaseError } from './contract.js';
export type { Capabilities, DatabaseErrorCode, Destination, DialectName, MappedDatabaseError, OpenOptions, Store } from './contract.js';

/**
 * Every destination callsync can write to, the most specific first: the SQLite file path takes
 * whatever no URL scheme claimed. A new destination is a file in this folder and a line here.
 */
export const DESTINATIONS: readonly Destination[] = [postgres, sqlite];

/** `scheme://` at the start of a setting: a URL, never a file path. */
const URL_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/**
 * The destination a `database` setting names: a postgres:// (or postgresql://) URL, or else a
 * SQLite file path. A URL of any other scheme is refused (ConfigError, one line) rather than taken
 * for a file path: `mysql://…` must not become a folder named "mysql:".
 */
export function resolveDestination(database: string): Destination {
  const scheme = URL_SCHEME.exec(database)?.[1];
  for (const d of DESTINATIONS) {
    if (scheme !== undefined && d.capabilities.localFile) continue;
    if (d.accepts(database)) return d;
  }
  const forms = [...DESTINATIONS].reverse().map((d) => d.settingForm);
  const choices = forms.length > 1 ? `${forms.slice(0, -1).join(', ')} or ${forms.at(-1)!}` : forms.join('');
  throw new ConfigError(`database ${scheme ?? ''}://…: callsync cannot write to a "${scheme ?? ''}" database; give ${choices}`);
}

/** The destination a Kysely instance was opened on (the migrations' fragments, the sync's coordination). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any database schema: the migrations use Kysely<any>
export function destinationOf(db: Kysely<any>): Destination {
  const adapter: DialectAdapter = db.getExecutor().adapter;
  const found = DESTINATIONS.find((d) => d.ownsAdapter(adapter));
  if (!found) throw new InternalError(`internal: no destination uses the Kysely adapter ${adapter.constructor.name}`);
  return found;
}

/** Opens the configured database on its destination (a server is reached once, so failures are one line). */
export function openStore(database: string, opts: OpenOptions = {}): Promise<Store> {
  return resolveDestination(database).open(database, opts);
}

/** An empty database in memory, for a command that must read "nothing yet" without creating one. */
export function openScratchStore(): Store {
  return openSqliteStore(':memory:');
}

/**
 * A `database` setting as it may be shown anywhere (messages, logs, the HTML report): a URL
 * without its password, a file path as it is. Never throws: an unknown scheme shows no more than it.
 */
export function displayDatabase(database: string): string {
  const scheme = URL_SCHEME.exec(database)?.[1];
  const d = DESTINATIONS.find((x) => !(scheme !== undefined && x.capabilities.localFile) && x.accepts(database));
  return d ? d.display(database) : `${scheme ?? ''}://(not shown)`;
}

/** The former name of displayDatabase. */
export const maskDatabaseUrl = displayDatabase;

/**
 * A native database error (better-sqlite3's SQLITE_*, a PostgreSQL SQLSTATE, a socket error code)
 * as our stable code, a message and a hint; undefined for any other error. Give `database` when it
 * is known: only its destination is asked, and the message names the server.
 */
export function mapDatabaseError(err: unknown, database?: string): MappedDatabaseError | undefined {
  if (database !== undefined) {
    const d = DESTINATIONS.find((x) => x.accepts(database));
    return d?.mapError(err, database);
  }
  for (const d of DESTINATIONS) {
    const m = d.mapError(err);
    if (m) return m;
  }
  return undefined;
}

/**
 * A native database error as a DatabaseError (a CallsyncError: code, message, hint; the native
 * error as its cause); undefined for any other error, a CallsyncError included.
 */
export function toDatabaseError(err: unknown, database?: string): DatabaseError | undefined {
  const mapped = mapDatabaseError(err, database);
  return mapped ? new DatabaseError(mapped, err) : undefined;
}

/** False when the database is known to be missing (a SQLite file not created yet); a server is only known once reached. */
export function databaseExists(database: string): boolean {
  return resolveDestination(database).exists(database);
}
