import { Command, CommanderError, Option } from 'commander';
import { LOG_FORMATS, type LogFormat } from '../log/logger.js';
import { CallsyncError } from '../config/errors.js';
import { toDatabaseError } from '../store/destinations/index.js';
import { EXIT, EXIT_FOR_CODE } from './exit-codes.js';
import { sanitizeForTerminal } from './output.js';
import { setLogFormat } from './runtime.js';
import { packageVersion } from './version.js';

/** A command's module, loaded when the command runs (or for help): its register function. */
type Register = (program: Command) => void;

/**
 * Every command, in the order help lists them, each loaded on demand. A command's module pulls in
 * its stages and their packages (the HTTP client, the simulator, the report's HTML, the scheduler):
 * loaded all at once they were half a second of every process, as much as `callsync reconcile`'s
 * queries over 200,000 calls. A command line naming a command loads that one only.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  sync: async () => (await import('./commands/sync.js')).registerSync,
  schedule: async () => (await import('./commands/schedule.js')).registerSchedule,
  migrate: async () => (await import('./commands/migrate.js')).registerMigrate,
  reconcile: async () => (await import('./commands/reconcile.js')).registerReconcile,
  verify: async () => (await import('./commands/verify.js')).registerVerify,
  export: async () => (await import('./commands/export.js')).registerExport,
  query: async () => (await import('./commands/query.js')).registerQuery,
  report: async () => (await import('./commands/report.js')).registerReport,
  runs: async () => (await import('./commands/runs.js')).registerRuns,
  status: async () => (await import('./commands/status.js')).registerStatus,
  config: async () => (await import('./commands/config.js')).registerConfig,
  init: async () => (await import('./commands/init.js')).registerInit,
  check: async () => (await import('./commands/check.js')).registerCheck,
  state: async () => (await import('./commands/state.js')).registerState,
  copy: async () => (await import('./commands/copy.js')).registerCopy,
  simulate: async () => (await import('./commands/simulate.js')).registerSimulate,
  demo: async () => (await import('./commands/demo.js')).registerDemo,
};

/**
 * The command a command line names: its first word that is not an option nor the value of
 * --log-format (the one option before a command that takes a value). Undefined when there is none
 * or it is no command (help, a typo): then every command is registered, for help and suggestions.
 */
export function namedCommand(argv: readonly string[]): string | undefined {
  for (const a of words(argv)) return Object.hasOwn(COMMANDS, a) ? a : undefined;
  return undefined;
}

/** The words of a command line that are not options, nor the value of --log-format. */
function* words(argv: readonly string[]): Generator<string> {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--log-format') i++;
    else if (!a.startsWith('-')) yield a;
  }
}

/** `callsync --version` with no command named needs no command's module (loading them all was 0.5 s of CPU). */
function asksVersion(argv: readonly string[]): boolean {
  return argv.some((a) => a === '-V' || a === '--version') && !argv.some((a) => a === '-h' || a === '--help');
}

/**
 * Builds the command tree: every command, only `only`, or none (null: `--version`). Exported so
 * tests can inspect it without spawning a process.
 */
export async function buildProgram(only?: string | null): Promise<Command> {
  const program = new Command('callsync')
    .description('call-log analytics ETL for CometChat: sync, reconcile, export')
    .version(`callsync ${packageVersion()}`, '-V, --version', 'print the version and exit')
    // A usage error is one line, printed by main (commander's own was two: the error, then a hint).
    .configureOutput({ outputError: () => undefined })
    .addOption(new Option('--log-format <format>', 'log lines on stderr: pretty (default on a terminal) or json (default otherwise)').choices([...LOG_FORMATS]))
    .exitOverride();
  // Any command's logger is built after this: one option for all of them, before or after the command name.
  program.hook('preAction', (cmd) => setLogFormat(cmd.opts<{ logFormat?: LogFormat }>().logFormat));
  const names = only === null ? [] : only !== undefined ? [only] : Object.keys(COMMANDS);
  const registers = await Promise.all(names.map((n) => COMMANDS[n]!()));
  for (const register of registers) register(program);
  return program;
}

let stdoutGuarded = false;

/**
 * `callsync query … | head`: once the reader has gone, the next write fails with EPIPE. The output
 * nobody reads is not an error: the command ends at once, quietly, with exit 0, as `cat` does.
 * Without a listener the error escaped as an uncaught exception: a stack trace and exit 1.
 */
function endQuietlyOnClosedStdout(): void {
  if (stdoutGuarded) return;
  stdoutGuarded = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.OK);
    console.error(`callsync: cannot write to stdout (${err.code ?? err.message})`);
    process.exit(EXIT.SYNC_FAILED);
  });
}

/** Commander's codes for help it has printed itself (a group's help when no subcommand was named). */
const HELP_SHOWN = new Set(['commander.help', 'commander.helpDisplayed', 'commander.version']);

/**
 * The command a command line reaches ("export billing"): its words that name a command, then a
 * subcommand of it, and so on, options skipped. Undefined when the first names none.
 */
export function commandPath(program: Command, argv: readonly string[]): string | undefined {
  const path: string[] = [];
  let at: Command = program;
  for (const a of words(argv)) {
    const sub = at.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) break;
    path.push(sub.name());
    at = sub;
  }
  return path.length ? path.join(' ') : undefined;
}

/** Commander's message ("error: unknown option '--x'", maybe a "(Did you mean …?)" line) as one line with where to look. */
export function usageLine(message: string, command: string | undefined): string {
  const what = message
    .split('\n')
    .map((l) => l.trim().replace(/^error: /, ''))
    .filter(Boolean)
    .join(' ')
    .replace(/\.$/, '');
  return `callsync: ${what}; see \`callsync ${command ? `${command} ` : ''}--help\``;
}

export async function main(argv: readonly string[]): Promise<void> {
  endQuietlyOnClosedStdout();
  let program: Command | undefined;
  try {
    const only = namedCommand(argv);
    program = await buildProgram(only === undefined && asksVersion(argv) ? null : only);
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version have printed what was asked; so has a command group run without its
      // subcommand (its help, exit 2 as before). Any other usage error is said here, in one line.
      if (err.exitCode !== 0 && !HELP_SHOWN.has(err.code)) console.error(usageLine(err.message, program ? commandPath(program, argv) : undefined));
      process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
      return;
    }
    // Ours already, or a native database error its destination maps (SQLITE_BUSY past the busy timeout, a SQLSTATE).
    const known = err instanceof CallsyncError ? err : toDatabaseError(err);
    if (known && known.code !== 'INTERNAL') {
      // One line each (a config's problems all at once); the exit code from the one table.
      for (const line of known.lines()) console.error(sanitizeForTerminal(`callsync: ${line}`, { singleLine: true }));
      process.exitCode = EXIT_FOR_CODE[known.code];
      return;
    }
    // Not ours, or a bug we caught (INTERNAL): the stack helps whoever fixes it.
    console.error(sanitizeForTerminal(`callsync: unexpected error: ${(err as Error).stack ?? String(err)}`));
    process.exitCode = known ? EXIT_FOR_CODE[known.code] : EXIT.INTERNAL;
  }
}


