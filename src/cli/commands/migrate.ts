import { defaultConfigPath, readEnvironment } from '../../config/environment.js';
import type { Command } from 'commander';
import { openStore } from '../../store/connection.js';
import { migrateToLatest } from '../../store/migrate.js';
import { resolveDatabase } from '../database-path.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create or upgrade the database schema (sync does this by itself)')
    .option('-c, --config <file>', 'config file', defaultConfigPath())
    .option('--database <path>', 'database file (overrides the config)')
    .action(async (flags: { config: string; database?: string }) => {
      const { database: path, passwordEnv } = resolveDatabase(flags);
      const store = await openStore(path, { passwordEnv, env: readEnvironment() });
      try {
        const result = await migrateToLatest(store.db);
        const applied = result.results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? [];
        console.log(applied.length ? `${store.path}: applied ${applied.join(', ')}` : `${store.path}: schema is up to date`);
      } finally {
        await store.close();
      }
    });
}
