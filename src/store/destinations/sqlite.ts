import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteAdapter, SqliteDialect, type DialectAdapter, type SqliteDatabase as SqliteDialectDatabase } from 'kysely';
import type { DialectSql } from '../../../migrations/dialect.js';
import type { Database } from '../schema.js';
import { openSqliteReadOnly, sqliteOpenProblem } from './sqlite-open-problem.js';
import { streamSqlite } from './sqlite-query.js';
import { streamSqliteInChild } from './sqlite-query-process.js';
import {
  errorCode,
  errorMessage,
  type Destination,
  type MappedDatabaseError,
  type OpenOptions,
  type Store,
} from './contract.js';

/** How long a writer waits for another process's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;

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

/** Page size of a database callsync creates (SQLite's default is 4096). */
const PAGE_SIZE = 32768;

/**
 * Opens a SQLite file natively with the settings the sync relies on: WAL (readers never block the
 * writer), synchronous=NORMAL (durable at each checkpoint, safe with WAL), a busy timeout, foreign
 * keys. Read-only opens never create the file.
 */
function openNative(path: string, opts: OpenOptions): SqliteDatabase.Database {
  const timeout = opts.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  if (opts.readonly) {
    const native = openSqliteReadOnly(path, timeout);
    native.pragma('foreign_keys = ON');
    return native;
  }
  let native: SqliteDatabase.Database;
  try {
    if (path !== ':memory:') createPrivately(path);
    native = new SqliteDatabase(path, { timeout });
    // Applies to a new file only (before its first page is written; an existing database keeps
    // its page size). A call's payload row is ~1.4 KB and the rows fill pages in call order, each
    // page leaving the part of a row that does not fit empty: a quarter of a 4 KB page, ~5.6 % of
    // a 16 KB page, ~2.8 % of a 32 KB one (issue 16, 200,000 calls: 2,530 → 2,477 bytes per call;
    // 64 KB gave 2,460 for twice the bytes each random page write of the sync costs).
    native.pragma(`page_size = ${PAGE_SIZE}`);
    native.pragma('journal_mode = WAL');
    native.pragma('synchronous = NORMAL');
    // Statement journals (SQLite keeps one while a multi-row write runs inside a transaction, to
    // undo that statement alone) spill to a temporary file past 64 KB, two of these 32 KB pages:
    // a sync wrote some 13 KB per call to them (issue 16). In memory they are a few MB at most.
    native.pragma('temp_store = MEMORY');
    if (path !== ':memory:') keepPrivate(path);
    native.pragma('foreign_keys = ON');
  } catch (err) {
    throw sqliteOpenProblem(path, err, false);
  }
  return native;
}

/** A SQLite file opened (and created unless read-only) as a Store. */
export function openSqliteStore(path: string, opts: OpenOptions = {}): Store {
  const db = new Kysely<Database>({ dialect: createSqliteDialect(path, opts) });
  return { db, path, dialect: 'sqlite', close: () => db.destroy() };
}

/** Kysely's SQLite dialect on the file, opened at once (so a bad path fails here, as one line). */
function createSqliteDialect(path: string, opts: OpenOptions = {}): TransactionalDdlSqliteDialect {
  return new TransactionalDdlSqliteDialect({ database: withStatementCache(openNative(path, opts)) });
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

const sqliteSql: DialectSql = {
  day: (c) => `date(${c}, 'unixepoch')`,
  month: (c) => `strftime('%Y-%m', ${c}, 'unixepoch')`,
  real: (e) => `cast(${e} as real)`,
  idType: 'integer',
  sharedWriters: false,
  autoIncrement: (c) => c.autoIncrement(),
};

/** SQLITE_BUSY_SNAPSHOT → SQLITE_BUSY: an extended result code's primary code. */
function primaryCode(code: string): string {
  return code.split('_').slice(0, 2).join('_');
}

/** better-sqlite3's SqliteError codes, as our codes (https://www.sqlite.org/rescode.html). */
function mapSqliteError(err: unknown, database?: string): MappedDatabaseError | undefined {
  const code = errorCode(err);
  if (!code.startsWith('SQLITE_')) return undefined;
  const file = database ? `the database ${database}` : 'the database';
  switch (primaryCode(code)) {
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      // Another process kept the database locked for longer than the busy timeout.
      return { code: 'DB_LOCKED', message: 'the database is locked by another process (waited the busy timeout, CALLSYNC_BUSY_TIMEOUT_MS)', hint: 'try again when it is released' };
    case 'SQLITE_READONLY':
      return { code: 'DB_READ_ONLY', message: `${file} cannot be written (${errorMessage(err)})`, hint: 'check that the file and its folder are writable by this user' };
    case 'SQLITE_CANTOPEN':
      return { code: 'DB_CANNOT_OPEN', message: `${file} cannot be opened (${errorMessage(err)})`, hint: 'check the path and that its folder is writable' };
    case 'SQLITE_FULL':
      return { code: 'DB_FULL', message: `${file} cannot grow (${errorMessage(err)})`, hint: 'free some disk space and run the command again' };
    default:
      return undefined;
  }
}

/** A SQLite file: one writer at a time, no server, no roles. */
export const sqlite: Destination = {
  name: 'sqlite',
  label: 'SQLite',
  settingForm: 'a SQLite file path',
  capabilities: {
    transactionalDdl: true,
    concurrentWriters: false,
    serverSideCancel: false,
    localFile: true,
    sequences: false,
    rowid: true,
    passwordLogin: false,
  },
  sql: sqliteSql,
  // Anything that is not a URL of another destination is a file path (index.ts refuses other schemes first).
  accepts: () => true,
  ownsAdapter: (adapter) => adapter instanceof SqliteAdapter,
  display: (database) => database,
  exists: (database) => database === ':memory:' || existsSync(database),
  createDialect: (database, opts) => createSqliteDialect(database, opts),
  settingProblems: () => [],
  // INTEGER PRIMARY KEY is the rowid: the next id is always past the largest one.
  restartSerial: () => Promise.resolve(),
  open: (database, opts) => Promise.resolve(openSqliteStore(database, opts)),
  // In a process of its own when the caller names one (`callsync query`): a statement runs in
  // SQLite's C code, which neither Ctrl-C nor a timer can stop in this process (sqlite-query-process.ts).
  streamReadOnlyQuery: (database, text, sink, opts) => (opts.isolateIn ? streamSqliteInChild(opts.isolateIn, database, text, sink, opts) : streamSqlite(database, text, sink, opts.limit)),
  mapError: mapSqliteError,
};
