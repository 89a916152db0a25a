/** Exit codes, documented in the README. */
export const EXIT = {
  OK: 0,
  /** At least one app failed or synced only partly; `status`: the last run of an app failed. */
  SYNC_FAILED: 1,
  /** A bad argument or config: the message says which and what to do. */
  USAGE: 2,
  /** An unexpected internal error (a bug): the message and stack go to stderr. */
  INTERNAL: 3,
  /** Another callsync process holds the sync lease of this database: nothing was done. */
  SKIPPED: 4,
  /** Stopped by SIGTERM/SIGINT: what was fetched was written; the next run resumes. */
  INTERRUPTED: 5,
} as const;
