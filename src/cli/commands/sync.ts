import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { assertApiKeys } from '../../config/api-keys.js';
import { configPath, loadConfigFile } from '../../config/load.js';
import { runSyncCoordinated } from '../../sync/run-sync.js';
import { formatAppSummary } from '../app-summary.js';
import { EXIT } from '../exit-codes.js';
import { sanitizeForTerminal } from '../output.js';
import { parseTimeArg } from '../parse-time.js';
import { createProgressDisplay } from '../progress.js';
import { openRuntime } from '../runtime.js';
import { abortOnSignals } from '../shutdown.js';

interface SyncFlags {
  config?: string;
  database?: string;
  logLevel?: string;
  full?: boolean;
  refetch?: boolean;
  since?: string;
  until?: string;
  app?: string[];
  quiet?: boolean;
  progress?: boolean;
  tickKey?: string;
}

export function registerSync(program: Command): void {
  program
    .command('sync')
    .description('sync calls of every configured app into the database (incremental unless --full)')
    .option('-c, --config <file>', 'config file (default: $CALLSYNC_CONFIG or callsync.config.json)')
    .option('--database <path>', 'database file (overrides config and CALLSYNC_DATABASE)')
    .option('--log-level <level>', 'JSON log level on stderr: fatal, error, warn, info, debug, trace, silent')
    .option('--full', 'ignore the watermark and re-list every call (unchanged calls cost no Get Call)')
    .option('--since <date>', 'backfill calls started at or after this date (YYYY-MM-DD, ISO or unix s); keeps the watermark')
    .option('--until <date>', 'backfill calls started before this date; keeps the watermark')
    .option('--refetch', 'with --since/--until: Get Call for every call of the window, changed or not (a repair tool)')
    .option('--app <appId...>', 'sync only these apps')
    .option('-q, --quiet', 'print only failures, log only errors')
    .option('--no-progress', 'no live progress display on a terminal')
    .option('--tick-key <key>', 'PostgreSQL workers given the same key sync each app once (e.g. the date)')
    .action(async (flags: SyncFlags) => {
      const cfgPath = configPath(flags.config, process.env);
      const settings = loadConfigFile(cfgPath, process.env, { ...(flags.database ? { database: flags.database } : {}), ...(flags.logLevel ? { logLevel: flags.logLevel } : {}) });
      const since = flags.since !== undefined ? parseTimeArg('--since', flags.since) : undefined;
      const until = flags.until !== undefined ? parseTimeArg('--until', flags.until) : undefined;
      if (since !== undefined && until !== undefined && since >= until) throw new ConfigError('--since must be before --until');
      if (flags.refetch && since === undefined && until === undefined) throw new ConfigError('--refetch needs a window: add --since and/or --until (YYYY-MM-DD)');
      const unknown = (flags.app ?? []).filter((id) => !settings.apps.some((a) => a.appId === id));
      if (unknown.length) throw new ConfigError(`--app ${unknown.join(', ')}: not in ${cfgPath}; configured apps: ${settings.apps.map((a) => a.appId).join(', ')}`);
      assertApiKeys(settings, flags.app);
      const rt = await openRuntime(settings, { quiet: flags.quiet ?? false });
      const progress = flags.quiet || flags.progress === false ? undefined : createProgressDisplay();
      const stop = abortOnSignals((sig) => rt.log.warn({ signal: sig }, 'stopping: writing what was fetched, then exiting'));
      try {
        const outcome = await runSyncCoordinated({ db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log }, settings, {
          full: flags.full ?? false,
          ...(flags.refetch ? { refetch: true } : {}),
          signal: stop.signal,
          ...(since !== undefined ? { since } : {}),
          ...(until !== undefined ? { until } : {}),
          ...(flags.app ? { appIds: flags.app } : {}),
          ...(flags.tickKey ? { tickKey: flags.tickKey } : {}),
          ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
        });
        progress?.stop();
        if (outcome.skipped) {
          console.error(sanitizeForTerminal(`callsync: skipped: ${outcome.reason}`, { singleLine: true }));
          process.exitCode = EXIT.SKIPPED;
          return;
        }
        for (const r of outcome.summary.results) {
          if (!flags.quiet || r.status !== 'ok') (r.status === 'ok' ? console.log : console.error)(formatAppSummary(r));
        }
        if (!flags.quiet) for (const s of outcome.summary.skippedApps ?? []) console.log(sanitizeForTerminal(`${s.appId} (${s.region}): skipped: ${s.reason}`, { singleLine: true }));
        process.exitCode = outcome.summary.ok ? EXIT.OK : stop.signal.aborted ? EXIT.INTERRUPTED : EXIT.SYNC_FAILED;
      } finally {
        progress?.stop();
        stop.dispose();
        await rt.close();
      }
    });
}
