import { Migrator, type Kysely, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { migrationsFor } from '../../migrations/index.js';
import { CallsyncError } from '../config/errors.js';
import { destinationOf } from './destinations/index.js';
import type { Database } from './schema.js';

/** A migration failed: the schema was left as it was before it (transactional DDL). */
export class MigrationError extends CallsyncError {
  constructor(message: string) {
    super('MIGRATION_FAILED', message);
    this.name = 'MigrationError';
  }
}

/** The migrations bound to the SQL fragments of the destination `db` was opened on. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's Migrator takes any schema
export function migrationProvider(db: Kysely<any>): MigrationProvider {
  const migrations = migrationsFor(destinationOf(db).sql);
  return { getMigrations: () => Promise.resolve(migrations) };
}

/** Brings the schema to the latest migration. Throws MigrationError naming the failed migration. */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResultSet> {
  const result = await new Migrator({ db, provider: migrationProvider(db) }).migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const reason = result.error instanceof Error ? result.error.message : String(result.error);
    throw new MigrationError(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${reason}`);
  }
  return result;
}

/**
 * The migrations not yet applied to `db`, oldest first; every one of them when no migration ever
 * ran. Only reads (the migrations table is not created), so it runs on a read-only connection.
 */
export async function pendingMigrations(db: Kysely<Database>): Promise<{ pending: string[]; applied: number }> {
  const all = await new Migrator({ db, provider: migrationProvider(db) }).getMigrations();
  return { pending: all.filter((m) => m.executedAt === undefined).map((m) => m.name), applied: all.filter((m) => m.executedAt !== undefined).length };
}
