import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, type Kysely, type MigrationResultSet } from 'kysely';
import type { Database } from './schema.js';

/** migrations/ sits two levels above this file both in the source tree and in dist/. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

export class MigrationError extends Error {
  readonly code = 'MIGRATION_FAILED';
}

/** Brings the schema to the latest migration. Throws MigrationError naming the failed migration. */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const reason = result.error instanceof Error ? result.error.message : String(result.error);
    throw new MigrationError(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${reason}`);
  }
  return result;
}
