import type { Kysely } from 'kysely';
import { ConfigError } from '../config/errors.js';
import type { Database } from '../store/schema.js';

/** Every app the database knows: one with calls, a sync state or a run (a failed first sync included). */
export async function appsInDatabase(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom('sync_state').select('app_id')
    .union(db.selectFrom('sync_runs').select('app_id'))
    .union(db.selectFrom('calls').select('app_id'))
    .execute();
  return [...new Set(rows.map((r) => r.app_id))].sort();
}

/**
 * Refuses an `--app` the database has never heard of, as `sync` refuses one its config lacks: a
 * typo used to give an empty export, reconciliation or run list and exit 0, which reads as "that
 * app had nothing". One line naming the apps there are (a ConfigError: exit 2).
 */
export async function assertKnownApps(db: Kysely<Database>, requested: readonly string[] | undefined, database: string): Promise<void> {
  if (!requested?.length) return;
  const known = await appsInDatabase(db);
  const unknown = requested.filter((id) => !known.includes(id));
  if (!unknown.length) return;
  const there = known.length ? `apps in it: ${known.join(', ')}` : 'it holds no app yet; run `callsync sync` first';
  throw new ConfigError(`--app ${unknown.join(', ')}: no such app in the database ${database} (${there})`);
}
