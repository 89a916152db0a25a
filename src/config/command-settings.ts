import { existsSync } from 'node:fs';
import { ConfigError } from './errors.js';
import { busyTimeoutMs, configPath, loadConfigFile, type ConfigFlags, type Env, type Settings } from './load.js';
import { ConfigFileSchema } from './schema.js';

/** The flags every command may take that decide where its settings come from. */
export interface CommonFlags extends ConfigFlags {
  /** `-c, --config <file>`. */
  config?: string | undefined;
}

/**
 * What a command runs with, resolved once from its flags, the environment, the config file and
 * the defaults. `settings` is the whole resolved file when one was read; the database fields are
 * always there, file or not.
 */
export interface CommandSettings {
  /** The config file path: --config, else CALLSYNC_CONFIG, else callsync.config.json. */
  readonly configPath: string;
  /** Whether that file existed and was read (then `settings` is set). */
  readonly configRead: boolean;
  readonly settings: Settings | undefined;
  /** --database, else CALLSYNC_DATABASE, else the file's (relative to the file's folder), else the default. */
  readonly database: string;
  /** The file's `databasePasswordEnv` (for a postgres:// URL without a password), whichever database won. */
  readonly databasePasswordEnv: string | undefined;
  /** How long a SQLite reader or writer waits for another process's lock (CALLSYNC_BUSY_TIMEOUT_MS). */
  readonly busyTimeoutMs: number;
  /** The environment this was resolved from: the stages below receive what they need from it. */
  readonly env: Env;
}

/** Options of resolveCommandSettings. */
export interface ResolveCommandOptions {
  /**
   * The command cannot run without the file (its apps: sync, schedule, check, verify, config
   * check): a missing file is refused with loadConfigFile's one line, wherever its path came from.
   */
  readonly requireFile?: boolean;
  /**
   * The command creates the database (migrate): without a file it takes no default, so
   * `--database` or CALLSYNC_DATABASE must name it, else the missing file is refused in one line.
   */
  readonly requireNamedDatabase?: boolean;
}

/** The database when neither a flag, the environment nor a file names one (the schema's default). */
export const DEFAULT_DATABASE: string = ConfigFileSchema.shape.database.parse(undefined);

/**
 * The one resolution every command goes through: flags > environment > file > defaults.
 *
 * - config path: `--config`, else `CALLSYNC_CONFIG`, else `callsync.config.json`;
 * - the file is read whenever it exists (its problems are refused, all at once, as ConfigError);
 * - a `--config` given on the command line that does not exist is a one-line ConfigError (a typo
 *   must not silently fall back to the defaults); so is any missing file when `requireFile`
 *   (commands that need apps), or when `requireNamedDatabase` and nothing names the database;
 * - database: `--database`, else `CALLSYNC_DATABASE` (both as typed, relative to the current
 *   folder), else the file's `database` (relative to the file's folder), else `data/callsync.db`;
 *   `databasePasswordEnv` is the file's whichever of them won (it only names where a password is).
 *
 * Reads the config file; never reads process.env (the caller passes `readEnvironment()`).
 */
export function resolveCommandSettings(flags: CommonFlags, env: Env, opts: ResolveCommandOptions = {}): CommandSettings {
  const path = configPath(flags.config, env);
  const overrides: ConfigFlags = {
    ...(flags.database !== undefined ? { database: flags.database } : {}),
    ...(flags.logLevel !== undefined ? { logLevel: flags.logLevel } : {}),
  };
  // loadConfigFile states a missing file in one line (with what to do): an explicit --config, or a
  // command that needs apps, gets that line rather than the defaults.
  const read = opts.requireFile || flags.config !== undefined || existsSync(path);
  const settings = read ? loadConfigFile(path, env, overrides) : undefined;
  if (settings) {
    return Object.freeze({ configPath: path, configRead: true, settings, database: settings.database, databasePasswordEnv: settings.databasePasswordEnv, busyTimeoutMs: settings.busyTimeoutMs, env });
  }
  const fromEnv = env.CALLSYNC_DATABASE?.trim() ? env.CALLSYNC_DATABASE.trim() : undefined;
  // loadConfigFile throws its one line for the missing file.
  if (opts.requireNamedDatabase && flags.database === undefined && fromEnv === undefined) loadConfigFile(path, env, overrides);
  const database = flags.database ?? fromEnv ?? DEFAULT_DATABASE;
  if (!database) throw new ConfigError('--database: expected a database file path or a postgres:// URL');
  return Object.freeze({ configPath: path, configRead: false, settings: undefined, database, databasePasswordEnv: undefined, busyTimeoutMs: busyTimeoutMs(env), env });
}
