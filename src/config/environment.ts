import type { Env } from './load.js';

let snapshot: Env | undefined;

/**
 * The process environment as callsync sees it, read once per process and frozen: the CALLSYNC_*
 * overrides, the API-key and database-password variables the config names (looked up by name, so
 * this is a record rather than a fixed shape), COLUMNS for the output width. This module is the one
 * place `process.env` is read (`npm run lint` enforces it): commands take their values from here and
 * hand the stages below plain parameters, so no stage depends on the environment it runs in. pg
 * still reads PG* variables itself, as libpq does. Frozen, so nothing can pass settings to another
 * module through the environment behind the config's back.
 */
export function readEnvironment(): Env {
  snapshot ??= Object.freeze({ ...process.env });
  return snapshot;
}

