import type { ErrorCode } from '../config/errors.js';

/** Exit codes, documented in the README. */
export const EXIT = {
  OK: 0,
  /** At least one app failed or synced only partly; `status`: the last run of an app failed. */
  SYNC_FAILED: 1,
  /** A bad argument or config: the message says which and what to do. */
  USAGE: 2,
  /** An unexpected internal error (a bug): the message and stack go to stderr. */
  INTERNAL: 3,
  /** Another callsync process holds the sync lease of this database (SQLite), or was syncing an app (PostgreSQL): this run did not sync it. */
  SKIPPED: 4,
  /** Stopped by SIGTERM/SIGINT: what was fetched was written; the next run resumes. */
  INTERRUPTED: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * The one table from an error's code (config/errors.ts) to the process's exit code; main() reads
 * nothing else to choose it. The README's "Exit codes" lists the same (a test holds them equal).
 */
export const EXIT_FOR_CODE: Readonly<Record<ErrorCode, ExitCode>> = {
  CONFIG_INVALID: EXIT.USAGE,
  // The service: a command that talks to it failed (a sync reports these per app, with exit 1 too).
  API_AUTH: EXIT.SYNC_FAILED,
  API_ACCOUNT: EXIT.SYNC_FAILED,
  API_NOT_FOUND: EXIT.SYNC_FAILED,
  API_RATE_LIMITED: EXIT.SYNC_FAILED,
  API_TRANSIENT: EXIT.SYNC_FAILED,
  API_CLIENT: EXIT.SYNC_FAILED,
  API_ABORTED: EXIT.INTERRUPTED,
  LISTING_INCONSISTENT: EXIT.SYNC_FAILED,
  GROUP_TOO_LARGE: EXIT.SYNC_FAILED,
  // The database: busy or full is worth another run; a setting or permission that is wrong is not.
  DB_LOCKED: EXIT.SYNC_FAILED,
  DB_FULL: EXIT.SYNC_FAILED,
  DB_TOO_MANY_CONNECTIONS: EXIT.SYNC_FAILED,
  DB_READ_ONLY: EXIT.USAGE,
  DB_UNREACHABLE: EXIT.USAGE,
  DB_AUTH: EXIT.USAGE,
  DB_NOT_FOUND: EXIT.USAGE,
  DB_CANNOT_OPEN: EXIT.USAGE,
  MIGRATION_FAILED: EXIT.USAGE,
  // `callsync query`: the statement is the user's argument.
  QUERY_NOT_READ_ONLY: EXIT.USAGE,
  QUERY_INVALID: EXIT.USAGE,
  QUERY_TIMEOUT: EXIT.USAGE,
  QUERY_CANCELLED: EXIT.USAGE,
  QUERY_INTERRUPTED: EXIT.INTERRUPTED,
  LEASE_LOST: EXIT.SYNC_FAILED,
  LEASE_CONTENDED: EXIT.SKIPPED,
  INTERRUPTED: EXIT.INTERRUPTED,
  INTERNAL: EXIT.INTERNAL,
};
