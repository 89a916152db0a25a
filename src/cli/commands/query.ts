import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { runReadOnlyQuery } from '../../store/read-only-query.js';
import { parseFormat, renderGrid } from '../output.js';
import { resolveDatabasePath } from '../database-path.js';

export function registerQuery(program: Command): void {
  program
    .command('query')
    .description('run one read-only SQL statement against the database (tables and views: docs/schema.md)')
    .argument('[sql]', 'the SQL statement')
    .option('-f, --file <file>', 'read the statement from a file')
    .option('--format <format>', 'table, csv or json', 'table')
    .option('-c, --config <file>', 'config file (for its database)', process.env.CALLSYNC_CONFIG ?? 'callsync.config.json')
    .option('--database <path>', 'database file (overrides the config)')
    .action(async (text: string | undefined, flags: { file?: string; format: string; config: string; database?: string }) => {
      const format = parseFormat(flags.format, ['table', 'csv', 'json']);
      if ((text === undefined) === (flags.file === undefined)) throw new ConfigError('query: give the SQL either as an argument or with --file, e.g. callsync query "select count(*) from calls"');
      let statement = text ?? '';
      if (flags.file) {
        try {
          statement = readFileSync(flags.file, 'utf8');
        } catch (err) {
          throw new ConfigError(`--file ${flags.file}: ${(err as NodeJS.ErrnoException).code ?? 'cannot be read'}`);
        }
      }
      const result = await runReadOnlyQuery(resolveDatabasePath(flags), statement.trim().replace(/;\s*$/, ''));
      process.stdout.write(renderGrid(result.columns, result.rows, format));
    });
}
