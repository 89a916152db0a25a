import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import { CallsyncError, ConfigError } from '../../config/errors.js';
import { resolveDestination } from '../../store/destinations/index.js';
import { DEFAULT_QUERY_LIMIT, QueryError, QueryInterruptedError, streamReadOnlyQuery, type QuerySink } from '../../store/read-only-query.js';
import { EXIT } from '../exit-codes.js';
import { unmigratedProblem } from '../open-for-reading.js';
import { MAX_TABLE_ROWS, parseFormat, renderGrid, tooManyForTable, type OutputFormat } from '../output.js';
import { commandSettings } from '../setup.js';
import { configOption, databaseOption, formatOption } from '../shared-options.js';
import { abortOnSignals } from '../shutdown.js';

export function registerQuery(program: Command): void {
  program
    .command('query')
    .description('run one read-only SQL statement against the database (tables and views: docs/schema.md)')
    .argument('[sql]', 'the SQL statement')
    .option('-f, --file <file>', 'read the statement from a file')
    .addOption(formatOption(['table', 'csv', 'json'], 'table'))
    .option('--limit <rows>', 'print at most this many rows (0: no limit); more are announced on stderr', String(DEFAULT_QUERY_LIMIT))
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (text: string | undefined, flags: { file?: string; format: string; limit: string; config?: string; database?: string }) => {
      const format = parseFormat(flags.format, ['table', 'csv', 'json']);
      const limit = Number(flags.limit);
      if (!/^\d+$/.test(flags.limit.trim()) || !Number.isSafeInteger(limit)) throw new ConfigError(`--limit ${JSON.stringify(flags.limit)}: expected a whole number of rows (0: no limit)`);
      if ((text === undefined) === (flags.file === undefined)) throw new ConfigError('query: give the SQL either as an argument or with --file, e.g. callsync query "select count(*) from calls"');
      let statement = text ?? '';
      if (flags.file) {
        try {
          statement = readFileSync(flags.file, 'utf8');
        } catch (err) {
          throw new ConfigError(`--file ${flags.file}: ${(err as NodeJS.ErrnoException).code ?? 'cannot be read'}`);
        }
      }
      // The config file is read whenever it exists (its queryTimeoutSeconds, databasePasswordEnv).
      const { settings, database, databasePasswordEnv, busyTimeoutMs, env } = commandSettings(flags);
      // Ctrl-C cancels the statement on the PostgreSQL server, or stops SQLite's query process (a
      // second one exits at once). Without that process (a build without it) SQLite keeps the
      // default: the process ends once the statement does.
      const { serverSideCancel } = resolveDestination(database).capabilities;
      const isolateIn = serverSideCancel ? undefined : sqliteQueryChild();
      const signals = serverSideCancel || isolateIn ? abortOnSignals() : undefined;
      const out = new GridWriter(format);
      try {
        const summary = await streamReadOnlyQuery(database, statement.trim().replace(/;\s*$/, ''), out, {
          limit,
          timeoutSeconds: settings?.queryTimeoutSeconds,
          passwordEnv: databasePasswordEnv,
          env,
          ...(signals ? { signal: signals.signal } : {}),
          isolateIn,
        });
        await out.end();
        if (summary.truncated) console.error(`callsync: query: stopped at --limit ${limit} rows; the result has more (raise --limit, or 0 for no limit)`);
      } catch (err) {
        // A statement the database refused (a missing table, say) on a database no sync has set up:
        // the line says that too. Refusals of the connection (a superuser) stay as they are.
        if (err instanceof CallsyncError && err.code === 'QUERY_INVALID') {
          const unset = await unmigratedProblem({ database, databasePasswordEnv, busyTimeoutMs, env });
          if (unset) throw new QueryError('QUERY_INVALID', `${err.message}; ${unset.message}`);
        }
        if (!(err instanceof QueryInterruptedError)) throw err;
        // Not closed as if complete: an empty table or `[]` read as a whole (empty) result to anyone
        // not checking the exit code (probe round 21). The rows already written stay; JSON stays open.
        console.error(`callsync: ${err.message}`);
        process.exitCode = EXIT.INTERRUPTED;
      } finally {
        signals?.dispose();
      }
    });
}

/**
 * The SQLite query child's script, built beside the CLI (scripts/bundle-cli.mjs): next to the
 * bundle's entry when this module is a chunk of it (dist/cli/chunks/…), or in tsc's output
 * (dist/src/…). Undefined when neither is there (run from the sources): the statement then runs
 * in this process.
 */
function sqliteQueryChild(): URL | undefined {
  const candidates = ['../sqlite-query-child.js', './sqlite-query-child.js', '../../store/destinations/sqlite-query-child.js'].map((p) => new URL(p, import.meta.url));
  return candidates.find((u) => existsSync(u));
}

/**
 * Writes the result as it arrives: CSV and JSON batch by batch (waiting for stdout to drain),
 * the table once at the end (its column widths need every row; --limit bounds them). The bytes are
 * those renderGrid writes for the whole result at once.
 */
class GridWriter implements QuerySink {
  #columns: string[] = [];
  #table: unknown[][] = [];
  #written = 0;
  #started = false;
  #ended = false;

  constructor(private readonly format: OutputFormat) {}

  async columns(names: string[]): Promise<void> {
    this.#columns = names;
    this.#started = true;
    if (this.format === 'csv') await write(renderGrid(names, [], 'csv'));
  }

  async rows(batch: unknown[][]): Promise<void> {
    if (this.format === 'table') {
      // Said as soon as the result outgrows a table, not after reading all of it.
      if (this.#table.length + batch.length > MAX_TABLE_ROWS) throw tooManyForTable();
      this.#table.push(...batch);
      return;
    }
    if (this.format === 'csv') {
      await write(renderGrid(this.#columns, batch, 'csv').slice(renderGrid(this.#columns, [], 'csv').length));
    } else {
      // "[\n" + the objects joined by ",\n" + "\n]\n": the objects alone, then joined across batches.
      const objects = renderGrid(this.#columns, batch, 'json').slice(2, -3);
      await write(this.#written === 0 ? `[\n${objects}` : `,\n${objects}`);
    }
    this.#written += batch.length;
  }

  async end(): Promise<void> {
    if (this.#ended || !this.#started) return;
    this.#ended = true;
    if (this.format === 'table') await write(renderGrid(this.#columns, this.#table, 'table'));
    else if (this.format === 'json') await write(this.#written === 0 ? '[]\n' : '\n]\n');
  }
}

async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}
