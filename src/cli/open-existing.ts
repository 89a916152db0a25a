import { readEnvironment } from '../config/environment.js';
import { ConfigError } from '../config/errors.js';
import { busyTimeoutMs } from '../config/load.js';
import { openStore, type Store } from '../store/connection.js';
import { databaseExists } from '../store/destinations/index.js';
import { migrateToLatest } from '../store/migrate.js';

/**
 * Opens a database that a sync already created, brought to the latest schema (views included).
 * `passwordEnv`: the config's `databasePasswordEnv`, for a postgres:// URL without a password.
 */
export async function openExistingStore(path: string, opts: { passwordEnv?: string | undefined } = {}): Promise<Store> {
  if (!databaseExists(path)) throw new ConfigError(`database ${path} does not exist; run \`callsync sync\` first, or pass --database`);
  const store = await openStore(path, { busyTimeoutMs: busyTimeoutMs(readEnvironment()), passwordEnv: opts.passwordEnv, env: readEnvironment() });
  try {
    await migrateToLatest(store.db);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
