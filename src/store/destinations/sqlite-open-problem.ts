import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { ConfigError } from '../../config/errors.js';
import { errorCode, errorMessage } from './contract.js';

/**
 * Codes of a read-only open that failed because SQLite could not make (or lock) the WAL index, the
 * -shm file a reader of a WAL database needs beside it: its folder forbids creating it. SQLite's own
 * words for it ("attempt to write a readonly database") sent a reader looking for a write in a
 * SELECT (probe round 21 #12).
 */
const SHM_CODES: ReadonlySet<string> = new Set(['SQLITE_READONLY_DIRECTORY', 'SQLITE_READONLY_CANTINIT', 'SQLITE_READONLY_CANTLOCK', 'SQLITE_READONLY']);

function may(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Where a path leads: through symlinks, so that the folder checked is the file's own (probe round 22). */
function resolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Why a SQLite database could not be opened, as the one line every command prints (exit 2): a file
 * that is not there, a folder given for the file, a part of the path that is a file, a file that is
 * not a database or is damaged, a file (or its -wal or -shm) this user may not read or write, a
 * folder a reader of a WAL database cannot create the -shm file in, or (otherwise) SQLite's own code
 * and words. `readonly`: the open was a reader's (its advice is about reading, not about the folder
 * being writable for a sync). Each is said only when it is so: a corrupt file or unreadable -wal
 * were blamed on the folder (probe round 22).
 */
export function sqliteOpenProblem(path: string, err: unknown, readonly: boolean): ConfigError {
  const code = errorCode(err);
  const message = errorMessage(err);
  // Node's own errors start their message with the code: said once.
  const why = message.startsWith(code) ? message : `${code} ${message}`.trim();
  const problem = (text: string): ConfigError => new ConfigError(`database ${path} ${text}`.replace(/\s+/g, ' '), 'DB_CANNOT_OPEN');
  if (readonly && !existsSync(path)) return problem('does not exist; run `callsync sync` first, or pass --database');
  if (isFolder(path)) return problem(`is a folder; give the path of the database file in it (e.g. ${path.replace(/\/+$/, '')}/callsync.db)`);
  if (code === 'ENOTDIR' || code === 'EEXIST') return problem(`cannot be opened (${why}): a part of its path is a file, not a folder; check the path`);
  if (code === 'SQLITE_NOTADB') return problem(`cannot be opened: it is not a SQLite database (${message}); check the path, or pass --database`);
  if (code.startsWith('SQLITE_CORRUPT')) return problem(`cannot be opened: the file is damaged (${why}); restore it from a backup, or move it aside and run \`callsync sync\` to make a new one`);
  const file = resolved(path);
  if (existsSync(file) && !may(file, constants.R_OK)) return problem(`cannot be opened: this user may not read the file (${why}); check its permissions`);
  if (!readonly && existsSync(file) && !may(file, constants.W_OK)) return problem(`cannot be opened for writing: this user may not write the file (${why}); check its permissions`);
  for (const side of ['-wal', '-shm']) {
    const f = `${file}${side}`;
    if (existsSync(f) && !may(f, readonly ? constants.R_OK : constants.R_OK | constants.W_OK)) {
      return problem(`cannot be opened: this user may not ${readonly ? 'read' : 'write'} ${basename(f)} beside it (${why}); check that file's permissions`);
    }
  }
  if (readonly && (SHM_CODES.has(code) || code.startsWith('SQLITE_CANTOPEN')) && !may(dirname(file), constants.W_OK)) {
    return problem(
      `cannot be opened for reading by this user: it is in WAL mode, and SQLite must create ${basename(file)}-shm beside it to read it, but its folder ${dirname(file)} is not writable; give this user write access to that folder, or read a copy of the database`,
    );
  }
  return problem(`cannot be opened (${why}); check the path and that its folder is writable`);
}

/**
 * A SQLite file opened read-only (never created), its schema touched at once: a read-only open of a
 * WAL database still needs its -shm file, and a file that is not a database opens without a word,
 * so either fails here, as sqliteOpenProblem's one line, not mid-command (`query` said "query:
 * attempt to write a readonly database" for a SELECT: probe round 21 #12). The one way the readers
 * and `query` open a file.
 */
export function openSqliteReadOnly(path: string, timeoutMs?: number): SqliteDatabase.Database {
  let native: SqliteDatabase.Database | undefined;
  try {
    native = new SqliteDatabase(path, { readonly: true, fileMustExist: true, ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}) });
    native.prepare('select count(*) from sqlite_master').get();
    return native;
  } catch (err) {
    native?.close();
    throw sqliteOpenProblem(path, err, true);
  }
}
