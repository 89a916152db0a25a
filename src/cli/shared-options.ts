import { Option } from 'commander';
import type { OutputFormat } from './output.js';

/**
 * The options several commands share, declared once: the same flag, the same words in every
 * command's help. Each command adds the ones it takes (`.addOption(configOption())`); what they
 * mean is resolved in one place (config/command-settings.ts: flags > environment > file >
 * defaults). `--config` has no default value on purpose: a path typed on the command line is
 * told apart from the fallbacks, and refused when it does not exist.
 */

/** `-c, --config <file>`. */
export function configOption(description = 'config file (default: $CALLSYNC_CONFIG or callsync.config.json)'): Option {
  return new Option('-c, --config <file>', description);
}

/** `--database <path>` (demo describes its own: it takes no config and no CALLSYNC_DATABASE). */
export function databaseOption(description = 'database file or postgres:// URL (overrides CALLSYNC_DATABASE and the config)'): Option {
  return new Option('--database <path>', description);
}

/** `--app <appId...>` (several), or `--app <appId>` (one) where a command acts on a single app. */
export function appOption(description: string, opts: { single?: boolean; required?: boolean } = {}): Option {
  const option = new Option(opts.single ? '--app <appId>' : '--app <appId...>', description);
  if (opts.required) option.makeOptionMandatory();
  return option;
}

/** `--format <format>` with the command's choices (checked by output.ts's parseFormat, one line) and default. */
export function formatOption(choices: readonly OutputFormat[], dflt: OutputFormat): Option {
  const words = choices.length > 1 ? `${choices.slice(0, -1).join(', ')} or ${choices[choices.length - 1]!}` : choices.join('');
  return new Option('--format <format>', words).default(dflt);
}

/** `--out <file>` (with `-o` where a command had it). */
export function outOption(description: string, opts: { short?: boolean } = {}): Option {
  return new Option(opts.short ? '-o, --out <file>' : '--out <file>', description);
}

/** `--log-level <level>`. */
export function logLevelOption(): Option {
  return new Option('--log-level <level>', 'log level on stderr: fatal, error, warn, info, debug, trace, silent (overrides CALLSYNC_LOG_LEVEL and the config)');
}
