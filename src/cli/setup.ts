import { resolveCommandSettings, type CommandSettings, type CommonFlags, type ResolveCommandOptions } from '../config/command-settings.js';
import { readEnvironment } from '../config/environment.js';
import type { Env, Settings } from '../config/load.js';

/**
 * The CLI's one setup point: the only module under src/cli/ that reads the environment. Every
 * command resolves its settings here (config/command-settings.ts holds the rule: flags >
 * environment > file > defaults), and passes what the stages need down as parameters.
 */

/** The environment, read once per process (config/environment.ts). */
export function environment(): Env {
  return readEnvironment();
}

/** A command's settings: the config file when it exists, else the defaults (a missing --config is refused). */
export function commandSettings(flags: CommonFlags, opts: ResolveCommandOptions = {}): CommandSettings {
  return resolveCommandSettings(flags, readEnvironment(), opts);
}

/** A command's settings when it cannot run without the config file (its apps): a missing file is refused. */
export function fileSettings(flags: CommonFlags): CommandSettings & { readonly settings: Settings } {
  // requireFile reads the file or throws: settings is always there.
  return commandSettings(flags, { requireFile: true }) as CommandSettings & { readonly settings: Settings };
}
