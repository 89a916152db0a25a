import { readEnvironment } from '../config/environment.js';
import { loadConfigFile } from '../config/load.js';

/** The database a read command uses: --database, else CALLSYNC_DATABASE, else the config's. */
export function resolveDatabasePath(flags: { database?: string; config: string }): string {
  return resolveDatabase(flags).database;
}

/**
 * As resolveDatabasePath, with the config's `databasePasswordEnv` when the config was read (the
 * password of a postgres:// URL without one; else pg reads PGPASSWORD). Pass both to openStore or
 * openExistingStore.
 */
export function resolveDatabase(flags: { database?: string; config: string }): { database: string; passwordEnv?: string | undefined } {
  const override = flags.database ?? readEnvironment().CALLSYNC_DATABASE;
  if (override !== undefined) return { database: override };
  const settings = loadConfigFile(flags.config, readEnvironment());
  return { database: settings.database, passwordEnv: settings.databasePasswordEnv };
}
