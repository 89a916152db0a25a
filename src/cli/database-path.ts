import { loadConfigFile } from '../config/load.js';

/** The database a read command uses: --database, else CALLSYNC_DATABASE, else the config's. */
export function resolveDatabasePath(flags: { database?: string; config: string }): string {
  return flags.database ?? process.env.CALLSYNC_DATABASE ?? loadConfigFile(flags.config, process.env).database;
}
