import type { CommandSettings } from '../config/command-settings.js';
import { ConfigError } from '../config/errors.js';
import { openScratchStore, openStore, type Store } from '../store/connection.js';
import { databaseExists, displayDatabase, resolveDestination } from '../store/destinations/index.js';
import { migrateToLatest, pendingMigrations } from '../store/migrate.js';

/** The database a reader opens: from resolveCommandSettings (or a config read whole). */
export type ReadTarget = Pick<CommandSettings, 'database' | 'databasePasswordEnv' | 'busyTimeoutMs' | 'env'>;

export interface ReadOptions {
  /**
   * What a database that does not exist yet (no file, or no callsync table in it) means: refused in
   * one line (the default), or read as an empty one (`sync --dry-run`; nothing is created).
   */
  readonly missing?: 'refuse' | 'empty';
  /**
   * The command also writes: a tolerance in a transaction it rolls back (reconcile), a watermark
   * (state reset). It then gets a writing connection, after the same checks.
   */
  readonly write?: boolean;
  /** false: a schema behind is refused in one line instead of upgraded (`sync --dry-run` writes nothing). */
  readonly upgrade?: boolean;
}

/**
 * The one way a reader command (status, runs, reconcile, report, export billing, state, verify,
 * sync --dry-run) opens a database that a sync created:
 *
 * - it must exist: a SQLite file that is not there is refused in one line (`database X does not
 *   exist; run \`callsync sync\` first, or pass --database`), a database no sync has migrated as
 *   having no callsync tables yet, unless `missing: 'empty'`; `status` says "never synced" before it gets here;
 * - a schema on the latest migration is read through a read-only connection (SQLite `readonly`:
 *   nothing is written, so a read-only file or a backup copy can be read); PostgreSQL is opened as
 *   usual, the commands only read (or roll back);
 * - a schema behind (callsync was upgraded since the last sync) is first brought to the latest by
 *   a writing connection, the migrations sync would run, and read through it: a healthcheck or an
 *   export right after an upgrade works. `upgrade: false` (sync --dry-run, which writes nothing)
 *   refuses it in one line naming `callsync migrate` instead;
 * - a folder that forbids the -shm file, or a file that cannot be opened (or upgraded), is the
 *   store's one line (exit 2); a lock held by a writer past the busy timeout is the DB_LOCKED line
 *   (exit 1), as for sync.
 */
export async function openForReading(target: ReadTarget, opts: ReadOptions = {}): Promise<Store> {
  const { database } = target;
  const local = resolveDestination(database).capabilities.localFile;
  // 'unmigrated': the database is there but no sync has created callsync's tables in it (a PostgreSQL
  // database made for it): "does not exist" sent its owner looking for a database that was there.
  const absent = (why: 'missing' | 'unmigrated' = 'missing'): Promise<Store> => {
    if (opts.missing === 'empty') return emptyStore();
    throw notSyncedYet(database, why);
  };
  if (!databaseExists(database)) return absent();
  const store = await openTarget(target, true);
  let state: { pending: string[]; applied: number };
  try {
    state = await pendingMigrations(store.db);
  } catch (err) {
    await store.close();
    throw err;
  }
  if (state.applied === 0) {
    await store.close();
    return absent('unmigrated');
  }
  const writes = opts.write === true && local;
  if (!state.pending.length && !writes) return store;
  await store.close();
  if (state.pending.length && opts.upgrade === false) {
    throw new ConfigError(`database ${displayDatabase(database)} has an older schema (${state.pending.length} migration(s) to apply); run \`callsync migrate\` (or \`callsync sync\`) on it first`);
  }
  const writer = await openTarget(target, false);
  try {
    if (state.pending.length) await migrateToLatest(writer.db);
  } catch (err) {
    await writer.close();
    throw err;
  }
  return writer;
}

/** `target`'s store; `readonly` applies to a local file (a server database is opened as usual). */
function openTarget(target: ReadTarget, readonly: boolean): Promise<Store> {
  const local = resolveDestination(target.database).capabilities.localFile;
  return openStore(target.database, { readonly: readonly && local, busyTimeoutMs: target.busyTimeoutMs, passwordEnv: target.databasePasswordEnv, env: target.env });
}

/** The one line for a database that is not there, or that no sync has created callsync's tables in. */
function notSyncedYet(database: string, why: 'missing' | 'unmigrated'): ConfigError {
  const what = why === 'missing' ? 'does not exist' : 'has no callsync tables yet (no sync has run on it)';
  return new ConfigError(`database ${displayDatabase(database)} ${what}; run \`callsync sync\` first, or pass --database`);
}

/**
 * The readers' line when `target` exists but no sync has migrated it; undefined otherwise (or when
 * that cannot be told). For `query`, which opens no store of its own before running the statement:
 * on an empty SQLite file its failure read "no such table: calls" alone (probe round 22), where
 * every other reader names the cause and the command that fixes it.
 */
export async function unmigratedProblem(target: ReadTarget): Promise<ConfigError | undefined> {
  if (!databaseExists(target.database)) return undefined;
  let store: Store | undefined;
  try {
    store = await openTarget(target, true);
    return (await pendingMigrations(store.db)).applied === 0 ? notSyncedYet(target.database, 'unmigrated') : undefined;
  } catch {
    return undefined;
  } finally {
    await store?.close();
  }
}

/** An empty database in memory on the latest schema: "nothing yet", without creating a file. */
async function emptyStore(): Promise<Store> {
  const empty = openScratchStore();
  await migrateToLatest(empty.db);
  return empty;
}
