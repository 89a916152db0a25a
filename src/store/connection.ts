import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteAdapter, SqliteDialect, type DialectAdapter, type SqliteDatabase as SqliteDialectDatabase } from 'kysely';
import { ConfigError } from '../config/errors.js';
import type { Database } from './schema.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  readonly db: Kysely<Database>;
  /** The database as it may be shown: a file path, or a postgres URL without its password. */
  readonly path: string;
  readonly dialect: DialectName;
  close(): Promise<void>;
}

/** How long a writer waits for another process's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * Opens a SQLite file with the settings the sync relies on: WAL (readers never block the writer),
 * synchronous=NORMAL (durable at each checkpoint, safe with WAL), a busy timeout, foreign keys.
 * Read-only opens never create the file.
 */
export function openSqliteStore(path: string, opts: { readonly?: boolean; busyTimeoutMs?: number } = {}): Store {
  let native: SqliteDatabase.Database;
  try {
    if (!opts.readonly && path !== ':memory:') createPrivately(path);
    native = new SqliteDatabase(path, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false, timeout: opts.busyTimeoutMs ?? BUSY_TIMEOUT_MS });
    if (!opts.readonly) {
      native.pragma('journal_mode = WAL');
      native.pragma('synchronous = NORMAL');
      if (path !== ':memory:') keepPrivate(path);
    }
    native.pragma('foreign_keys = ON');
    // A read-only open of a WAL database still needs its -shm file: touch the schema now, so a
    // folder that forbids it fails here with the one-line error below, not mid-command.
    if (opts.readonly) native.prepare('select count(*) from sqlite_master').get();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new ConfigError(`database ${path} cannot be opened (${e.code ?? ''} ${e.message}); check the path and that its folder is writable`.replace(/\s+/g, ' '));
  }
  const db = new Kysely<Database>({ dialect: new TransactionalDdlSqliteDialect({ database: withStatementCache(native) }) });
  return {
    db,
    path,
    dialect: 'sqlite',
    close: () => db.destroy(),
  };
}

/**
 * The folder (0700) and an empty database file (0600) made before SQLite opens it: SQLite would
 * create it 0644, world-readable, and it gives the -wal and -shm files its database's mode. Both
 * modes pass through the umask, so a stricter one still wins.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * Takes group and other access off the database and its -wal/-shm (a database made 0644 by an
 * older version), never adding any. A file we may write but do not own cannot be chmod-ed: that is
 * its owner's choice, so it is left as it is.
 */
function keepPrivate(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      const mode = statSync(file).mode & 0o777;
      if (mode & 0o077) chmodSync(file, mode & 0o700);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw err;
    }
  }
}

/** Prepared statements kept per connection, by SQL text (least recently used dropped first). */
const STATEMENT_CACHE_SIZE = 128;

/**
 * Kysely's SQLite driver prepares every query anew. The sync runs the same few statement shapes
 * thousands of times, and preparing a 512-row upsert (17,408 parameters) cost more than running it,
 * so statements are kept by SQL text. Reuse is safe: Kysely runs one query at a time on the single
 * connection (its mutex), and a streamed select holds the connection until its iterator is closed.
 */
/**
 * SQLite runs DDL inside transactions, but Kysely's adapter says it does not, so its migrator ran
 * each statement on its own: a process killed inside a migration (seen: SIGKILL between two
 * ADD COLUMNs) left it half applied and unrecorded, and every later run failed on "duplicate
 * column". Saying so makes the migrator apply pending migrations and record them in one
 * transaction: all or nothing.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class TransactionalDdlSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

function withStatementCache(native: SqliteDatabase.Database): SqliteDialectDatabase {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => {
      cache.clear();
      native.close();
    },
    prepare: (sql: string) => {
      let stmt = cache.get(sql);
      if (stmt) {
        // Move to the newest end of the Map's insertion order.
        cache.delete(sql);
      } else {
        stmt = native.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

/** `database` values that name a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/**
 * Opens the configured database: a `postgres://` URL, or else a SQLite file path. `passwordEnv` is
 * the config's `databasePasswordEnv`: the password of a URL without one (else pg reads PGPASSWORD),
 * read from `env` (the caller's readEnvironment(): the store never reads the environment itself).
 */
export async function openStore(database: string, opts: { readonly?: boolean; busyTimeoutMs?: number; passwordEnv?: string | undefined; env?: Readonly<Record<string, string | undefined>> } = {}): Promise<Store> {
  if (isPostgresUrl(database)) {
    const { assertPostgresReachable, openPostgresStore } = await import('./postgres.js');
    await assertPostgresReachable(database, { passwordEnv: opts.passwordEnv, env: opts.env });
    return openPostgresStore(database, { passwordEnv: opts.passwordEnv, env: opts.env });
  }
  return openSqliteStore(database, opts);
}
