import { existsSync } from 'node:fs';
import { ConfigError } from '../config/errors.js';
import { busyTimeoutMs } from '../config/load.js';
import { isPostgresUrl, openStore, type Store } from '../store/connection.js';
import { migrateToLatest } from '../store/migrate.js';

/** Opens a database that a sync already created, brought to the latest schema (views included). */
export async function openExistingStore(path: string): Promise<Store> {
  if (!isPostgresUrl(path) && !existsSync(path)) throw new ConfigError(`database ${path} does not exist; run \`callsync sync\` first, or pass --database`);
  const store = await openStore(path, { busyTimeoutMs: busyTimeoutMs(process.env) });
  try {
    await migrateToLatest(store.db);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
