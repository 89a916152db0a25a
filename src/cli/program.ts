import { Command, CommanderError, Option } from 'commander';
import { LOG_FORMATS, type LogFormat } from '../log/logger.js';
import { CallsyncError } from '../config/errors.js';
import { toDatabaseError } from '../store/destinations/index.js';
import { registerCheck } from './commands/check.js';
import { registerConfig } from './commands/config.js';
import { registerCopy } from './commands/copy.js';
import { registerDemo } from './commands/demo.js';
import { registerExport } from './commands/export.js';
import { registerInit } from './commands/init.js';
import { registerMigrate } from './commands/migrate.js';
import { registerQuery } from './commands/query.js';
import { registerReconcile } from './commands/reconcile.js';
import { registerReport } from './commands/report.js';
import { registerRuns } from './commands/runs.js';
import { registerStatus } from './commands/status.js';
import { registerSchedule } from './commands/schedule.js';
import { registerSimulate } from './commands/simulate.js';
import { registerState } from './commands/state.js';
import { registerSync } from './commands/sync.js';
import { registerVerify } from './commands/verify.js';
import { EXIT, EXIT_FOR_CODE } from './exit-codes.js';
import { sanitizeForTerminal } from './output.js';
import { setLogFormat } from './runtime.js';
import { packageVersion } from './version.js';

/** Builds the command tree; exported so tests can inspect it without spawning a process. */
export function buildProgram(): Command {
  const program = new Command('callsync')
    .description('call-log analytics ETL for CometChat: sync, reconcile, export')
    .version(`callsync ${packageVersion()}`, '-V, --version', 'print the version and exit')
    .showHelpAfterError('(run `callsync --help` for the commands)')
    .addOption(new Option('--log-format <format>', 'log lines on stderr: pretty (default on a terminal) or json (default otherwise)').choices([...LOG_FORMATS]))
    .exitOverride();
  // Any command's logger is built after this: one option for all of them, before or after the command name.
  program.hook('preAction', (cmd) => setLogFormat(cmd.opts<{ logFormat?: LogFormat }>().logFormat));
  registerSync(program);
  registerSchedule(program);
  registerMigrate(program);
  registerReconcile(program);
  registerVerify(program);
  registerExport(program);
  registerQuery(program);
  registerReport(program);
  registerRuns(program);
  registerStatus(program);
  registerConfig(program);
  registerInit(program);
  registerCheck(program);
  registerState(program);
  registerCopy(program);
  registerSimulate(program);
  registerDemo(program);
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

export async function main(argv: readonly string[]): Promise<void> {
  endQuietlyOnClosedStdout();
  try {
    await buildProgram().parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed its message already (help and version exit with code 0).
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


