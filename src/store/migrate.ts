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

/** How long migrateToLatest waits out another process migrating the same SQLite file. */
const BUSY_WAIT_MS = 15_000;

/**
 * SQLite refused a write at once because another connection writes (SQLITE_BUSY): the busy timeout
 * does not cover a read transaction that turns into a write, as the migrator's lock does.
 */
function isBusy(err: unknown): boolean {
  return typeof err === 'object' && err !== null && ((err as { code?: unknown }).code === 'SQLITE_BUSY' || /database is locked/.test(String((err as { message?: unknown }).message)));
}

/**
 * Brings the schema to the latest migration. Throws MigrationError naming the failed migration.
 * Two processes migrating a new SQLite file at once: the one refused waits and tries again (the
 * migrations are transactional, and then already applied). It failed with "database is locked",
 * exit 2, before the sync lease could tell it another sync was running (probe round 16 c, F3).
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResultSet> {
  const deadline = Date.now() + BUSY_WAIT_MS;
  let result: MigrationResultSet;
  for (let attempt = 1; ; attempt++) {
    try {
      result = await new Migrator({ db, provider: migrationProvider(db) }).migrateToLatest();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      await pause(attempt);
      continue;
    }
    if (!result.error || !isBusy(result.error) || Date.now() >= deadline) break;
    await pause(attempt);
  }
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const reason = result.error instanceof Error ? result.error.message : String(result.error);
    throw new MigrationError(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${reason}`);
  }
  return result;
}

/** 50 ms, 100 ms, … up to 800 ms, with jitter so that two waiting processes do not collide again. */
function pause(attempt: number): Promise<void> {
  const ms = Math.min(800, 50 * 2 ** (attempt - 1));
  return new Promise((resolve) => setTimeout(resolve, ms / 2 + Math.random() * (ms / 2)));
}

/**
 * The migrations not yet applied to `db`, oldest first; every one of them when no migration ever
 * ran. Only reads (the migrations table is not created), so it runs on a read-only connection.
 */
export async function pendingMigrations(db: Kysely<Database>): Promise<{ pending: string[]; applied: number }> {
  const all = await new Migrator({ db, provider: migrationProvider(db) }).getMigrations();
  return { pending: all.filter((m) => m.executedAt === undefined).map((m) => m.name), applied: all.filter((m) => m.executedAt !== undefined).length };
}
