/**
 * Opening a store. Which database a `database` setting names, and how it is opened, is decided by
 * the destinations registry (./destinations/); this module is the name the rest of the code and
 * the tests import it by.
 */
export { BUSY_TIMEOUT_MS, openSqliteStore } from './destinations/sqlite.js';
export { openScratchStore, openStore, type DialectName, type OpenOptions, type Store } from './destinations/index.js';
