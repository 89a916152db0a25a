/**
 * callsync's one error vocabulary. Every failure that crosses a module boundary is a CallsyncError:
 * a stable `code` (below, the one list), a one-line `message`, and a `hint` saying what to do when
 * there is one. Callers branch on `code` or the class, never on the message's words; the CLI turns
 * `code` into the exit code (src/cli/exit-codes.ts, EXIT_FOR_CODE, documented in the README).
 *
 * This module sits at the bottom of the stages (level 0) so that every stage may import it. Native
 * errors (better-sqlite3's SQLITE_*, PostgreSQL's SQLSTATEs, socket codes) are read in one place
 * only: each destination's `mapError` (src/store/destinations/), which turns them into DB_* codes.
 */

/** Every code, grouped by where it arises. Codes are never renamed: scripts and logs rely on them. */
export const ERROR_CODES = [
  // A setting, flag or argument is wrong: the message says which.
  'CONFIG_INVALID',
  // The service (source/): one per ApiErrorKind.
  'API_AUTH',
  'API_ACCOUNT',
  'API_NOT_FOUND',
  'API_RATE_LIMITED',
  'API_TRANSIENT',
  'API_CLIENT',
  'API_ABORTED',
  // A listing that cannot be proved complete, a group over maxMembersPerGroup.
  'LISTING_INCONSISTENT',
  'GROUP_TOO_LARGE',
  // The database, as each destination's mapError names its native errors.
  'DB_LOCKED',
  'DB_READ_ONLY',
  'DB_UNREACHABLE',
  'DB_AUTH',
  'DB_NOT_FOUND',
  'DB_TOO_MANY_CONNECTIONS',
  'DB_CANNOT_OPEN',
  'DB_FULL',
  'MIGRATION_FAILED',
  // `callsync query`: a statement that is not one read-only query, an SQL error, the server's cancels, Ctrl-C.
  'QUERY_NOT_READ_ONLY',
  'QUERY_INVALID',
  'QUERY_TIMEOUT',
  'QUERY_CANCELLED',
  'QUERY_INTERRUPTED',
  // Sync coordination between processes.
  'LEASE_LOST',
  'LEASE_CONTENDED',
  // SIGTERM/SIGINT asked the work to stop.
  'INTERRUPTED',
  // A bug: something callsync itself guarantees did not hold.
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The codes a destination maps its native errors onto (the destination contract's `mapError`). */
export type DatabaseErrorCode = Extract<ErrorCode, `DB_${string}` | 'QUERY_TIMEOUT' | 'QUERY_CANCELLED'>;

export class CallsyncError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CallsyncError';
  }

  /** What the CLI prints, one line each (without the `callsync: ` prefix). */
  lines(): readonly string[] {
    return [this.hint ? `${this.message}; ${this.hint}` : this.message];
  }
}

/**
 * The codes of a ConfigError: a wrong setting, or a `database` setting that cannot be used as given
 * (found when opening it: the destination mapped the native error onto the DB_ code).
 */
export type SettingErrorCode = Extract<ErrorCode, 'CONFIG_INVALID' | 'DB_UNREACHABLE' | 'DB_AUTH' | 'DB_NOT_FOUND' | 'DB_CANNOT_OPEN'>;

/**
 * A configuration or argument problem, stated in one line with what to do about it. A config file
 * with several problems carries them all (`problems`, one line each), so a user fixes them in one
 * pass instead of one run per mistake; `message` is those lines joined by line breaks.
 */
export class ConfigError extends CallsyncError {
  declare readonly code: SettingErrorCode;
  readonly problems: readonly string[];
  constructor(message: string | readonly string[], code: SettingErrorCode = 'CONFIG_INVALID') {
    const lines = typeof message === 'string' ? [message] : [...message];
    super(code, lines.join('\n'));
    this.name = 'ConfigError';
    this.problems = Object.freeze(lines);
  }

  override lines(): readonly string[] {
    return this.problems;
  }
}

/** Something callsync guarantees itself did not hold (a bug): reported as "unexpected error", exit 3. */
export class InternalError extends CallsyncError {
  constructor(message: string) {
    super('INTERNAL', message);
    this.name = 'InternalError';
  }
}

/** The work was asked to stop by SIGTERM/SIGINT (the abort reason of the CLI's signal). */
export class InterruptedError extends CallsyncError {
  constructor(message: string) {
    super('INTERRUPTED', message);
    this.name = 'InterruptedError';
  }
}
