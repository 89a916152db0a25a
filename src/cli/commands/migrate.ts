import type { Command } from 'commander';
import { openStore } from '../../store/connection.js';
import { migrateToLatest } from '../../store/migrate.js';
import { commandSettings } from '../setup.js';
import { configOption, databaseOption } from '../shared-options.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create or upgrade the database schema (sync does this by itself)')
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: { config?: string; database?: string }) => {
      // The writer's open (it creates the database): the one command that migrates on purpose.
      const { database, databasePasswordEnv, busyTimeoutMs, env } = commandSettings(flags, { requireNamedDatabase: true });
      const store = await openStore(database, { passwordEnv: databasePasswordEnv, busyTimeoutMs, env });
      try {
        const result = await migrateToLatest(store.db);
        const applied = result.results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? [];
        console.log(applied.length ? `${store.path}: applied ${applied.join(', ')}` : `${store.path}: schema is up to date`);
      } finally {
        await store.close();
      }
    });
}
