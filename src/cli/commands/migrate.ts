import type { Command } from 'commander';
import { loadConfigFile } from '../../config/load.js';
import { openStore } from '../../store/connection.js';
import { migrateToLatest } from '../../store/migrate.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create or upgrade the database schema (sync does this by itself)')
    .option('-c, --config <file>', 'config file', process.env.CALLSYNC_CONFIG ?? 'callsync.config.json')
    .option('--database <path>', 'database file (overrides the config)')
    .action(async (flags: { config: string; database?: string }) => {
      const path = flags.database ?? process.env.CALLSYNC_DATABASE ?? loadConfigFile(flags.config, process.env).database;
      const store = await openStore(path);
      try {
        const result = await migrateToLatest(store.db);
        const applied = result.results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? [];
        console.log(applied.length ? `${store.path}: applied ${applied.join(', ')}` : `${store.path}: schema is up to date`);
      } finally {
        await store.close();
      }
    });
}
