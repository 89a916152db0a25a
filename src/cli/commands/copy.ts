import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { resolveDestination } from '../../store/destinations/index.js';
import { copyDatabase } from '../../store/copy-database.js';
import { migrateToLatest } from '../../store/migrate.js';
import { EXIT } from '../exit-codes.js';

export function registerCopy(program: Command): void {
  program
    .command('copy')
    .description('move an existing SQLite database into PostgreSQL (re-runnable: rows are upserted by key; refused when the target holds the same apps from elsewhere)')
    .requiredOption('--from <sqlite-file>', 'the SQLite database file')
    .requiredOption('--to <postgres-url>', 'postgres://user@host:5432/database (the database must exist)')
    .action(async (flags: { from: string; to: string }) => {
      // copyDatabase pages by SQLite's rowid (a local file) into a server with sequences.
      const from = resolveDestination(flags.from);
      if (!from.capabilities.localFile || !from.exists(flags.from)) throw new ConfigError(`--from ${flags.from}: expected an existing SQLite database file`);
      const to = resolveDestination(flags.to);
      if (to.capabilities.localFile) throw new ConfigError('--to: expected a postgres:// URL, e.g. postgres://user@127.0.0.1:5432/callsync');
      const source = await from.open(flags.from);
      const target = await to.open(flags.to);
      try {
        // Both sides on the latest schema, so every table and column exists on each.
        await migrateToLatest(source.db);
        await migrateToLatest(target.db);
        const results = await copyDatabase(source.db, target.db, { source: resolve(flags.from), onTable: (r) => console.log(`${r.table}: ${r.source} rows copied, ${r.target} in the target`) });
        const short = results.filter((r) => r.target < r.source);
        if (short.length) {
          console.error(`callsync: the target has fewer rows than the source in ${short.map((r) => r.table).join(', ')}`);
          process.exitCode = EXIT.SYNC_FAILED;
        } else console.log(`copied ${flags.from} to ${target.path}`);
      } finally {
        await source.close();
        await target.close();
      }
    });
}
