import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
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

/**
 * Why a SQLite database could not be opened, as the one line every command prints (exit 2):
 * a file that is not there, or not readable, a folder given for the file, a file that is not a database, a folder a reader of a WAL database
 * cannot create the -shm file in, or (otherwise) SQLite's own code and words. `readonly`: the open
 * was a reader's (its advice is about reading, not about the folder being writable for a sync).
 */
export function sqliteOpenProblem(path: string, err: unknown, readonly: boolean): ConfigError {
  const code = errorCode(err);
  const message = errorMessage(err);
  if (readonly && !existsSync(path)) {
    return new ConfigError(`database ${path} does not exist; run \`callsync sync\` first, or pass --database`, 'DB_CANNOT_OPEN');
  }
  if (isFolder(path)) {
    return new ConfigError(`database ${path} is a folder; give the path of the database file in it (e.g. ${path.replace(/\/+$/, '')}/callsync.db)`, 'DB_CANNOT_OPEN');
  }
  if (code === 'SQLITE_NOTADB') {
    return new ConfigError(`database ${path} cannot be opened: it is not a SQLite database (${message}); check the path, or pass --database`, 'DB_CANNOT_OPEN');
  }
  if (readonly && !may(path, constants.R_OK)) {
    return new ConfigError(`database ${path} cannot be opened for reading: this user may not read the file (${code} ${message}); check its permissions`.replace(/\s+/g, ' '), 'DB_CANNOT_OPEN');
  }
  if (readonly && (SHM_CODES.has(code) || code.startsWith('SQLITE_CANTOPEN')) && !may(dirname(path), constants.W_OK)) {
    return new ConfigError(
      `database ${path} cannot be opened for reading by this user: it is in WAL mode, and SQLite must create ${basename(path)}-shm beside it to read it, but its folder ${dirname(path)} is not writable; give this user write access to that folder, or read a copy of the database`,
      'DB_CANNOT_OPEN',
    );
  }
  return new ConfigError(`database ${path} cannot be opened (${code} ${message}); check the path and that its folder is writable`.replace(/\s+/g, ' '), 'DB_CANNOT_OPEN');
}
