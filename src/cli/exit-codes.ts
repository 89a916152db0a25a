/** Exit codes, documented in the README. */
export const EXIT = {
  OK: 0,
  /** At least one app failed or synced only partly. */
  SYNC_FAILED: 1,
  /** A bad argument or config: the message says which and what to do. */
  USAGE: 2,
  /** An unexpected internal error (a bug): the message and stack go to stderr. */
  INTERNAL: 3,
} as const;
