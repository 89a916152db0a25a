import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { assertApiKeys } from '../../config/api-keys.js';
import type { Settings } from '../../config/load.js';
import type { Logger } from '../../log/logger.js';
import { databaseExists, maskDatabaseUrl } from '../../store/destinations/index.js';
import { dryRun } from '../../sync/dry-run.js';
import { runSyncCoordinated } from '../../sync/run-sync.js';
import type { AppRetryEvent } from '../../sync/sync-app.js';
import { appSummaryJson, formatAppSummary, formatDatabaseLine, formatDryRun } from '../app-summary.js';
import { EXIT } from '../exit-codes.js';
import { sanitizeForTerminal } from '../output.js';
import { parseTimeArg } from '../parse-time.js';
import { createProgressDisplay, retryWarner, type ProgressDisplay } from '../progress.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { fileSettings } from '../setup.js';
import { appOption, configOption, databaseOption, logLevelOption } from '../shared-options.js';
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
  json?: boolean;
  dryRun?: boolean;
}

/** Retries shown on the live display when there is one, else warned in the log (rate-limited). */
function retryNotice(progress: ProgressDisplay | undefined, log: Logger): (e: AppRetryEvent) => void {
  return progress ? (e) => progress.retry(e) : retryWarner(log);
}

export function registerSync(program: Command): void {
  program
    .command('sync')
    .description('sync calls of every configured app into the database (incremental unless --full)')
    .addOption(configOption())
    .addOption(databaseOption())
    .addOption(logLevelOption())
    .option('--full', 'ignore the watermark and re-list every call (unchanged calls cost no Get Call)')
    .option('--since <date>', 'backfill calls started at or after this date (YYYY-MM-DD, ISO or unix s; UTC unless an offset is given); keeps the watermark')
    .option('--until <date>', 'backfill calls started before this date; keeps the watermark')
    .option('--refetch', 'with --since/--until: Get Call for every call of the window, changed or not (a repair tool)')
    .addOption(appOption('sync only these apps'))
    .option('-q, --quiet', 'print only failures, log only errors')
    .option('--no-progress', 'no live progress display on a terminal')
    .option('--json', 'print one JSON summary object per app on stdout (one a line) and nothing else there; no progress display')
    .option('--dry-run', 'list what a sync would fetch (List Calls only: no Get Call, no writes, no lease) and say so per app')
    .action(async (flags: SyncFlags) => {
      const resolved = fileSettings(flags);
      const { settings, configPath: cfgPath } = resolved;
      const since = flags.since !== undefined ? parseTimeArg('--since', flags.since) : undefined;
      const until = flags.until !== undefined ? parseTimeArg('--until', flags.until) : undefined;
      if (since !== undefined && until !== undefined && since >= until) throw new ConfigError('--since must be before --until');
      if (flags.refetch && since === undefined && until === undefined) throw new ConfigError('--refetch needs a window: add --since and/or --until (YYYY-MM-DD)');
      const unknown = (flags.app ?? []).filter((id) => !settings.apps.some((a) => a.appId === id));
      if (unknown.length) throw new ConfigError(`--app ${unknown.join(', ')}: not in ${cfgPath}; configured apps: ${settings.apps.map((a) => a.appId).join(', ')}`);
      assertApiKeys(settings, flags.app);
      const rt = await openRuntime(resolved, { quiet: flags.quiet ?? false, readOnly: flags.dryRun ?? false });
      if (flags.dryRun) return runDryRun(rt, settings, flags, since, until);
      const progress = flags.quiet || flags.json || flags.progress === false ? undefined : createProgressDisplay(process.stderr, rt.logOutput);
      const stop = abortOnSignals((sig) => rt.log.warn({ signal: sig }, 'stopping: writing what was fetched, then exiting'));
      try {
        const outcome = await runSyncCoordinated({ db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log }, settings, {
          full: flags.full ?? false,
          ...(flags.refetch ? { refetch: true } : {}),
          signal: stop.signal,
          ...(since !== undefined ? { since } : {}),
          ...(until !== undefined ? { until } : {}),
          ...(flags.app ? { appIds: flags.app } : {}),
          ...(progress ? { onProgress: (p) => progress.update(p) } : {}),
          onRetry: retryNotice(progress, rt.log),
        });
        progress?.stop();
        if (outcome.skipped) {
          console.error(sanitizeForTerminal(`callsync: skipped: ${outcome.reason}`, { singleLine: true }));
          if (flags.json) for (const a of selectedApps(settings, flags.app)) console.log(JSON.stringify(skippedJson({ ...a, reason: outcome.reason }, settings.database)));
          process.exitCode = EXIT.SKIPPED;
          return;
        }
        if (flags.json) {
          for (const r of outcome.summary.results) console.log(JSON.stringify(appSummaryJson(r, settings.database)));
          for (const a of outcome.summary.skippedApps ?? []) console.log(JSON.stringify(skippedJson(a, settings.database)));
        } else {
          for (const r of outcome.summary.results) {
            if (!flags.quiet || r.status !== 'ok') (r.status === 'ok' ? console.log : console.error)(formatAppSummary(r));
          }
          if (!flags.quiet) for (const s of outcome.summary.skippedApps ?? []) console.log(sanitizeForTerminal(`${s.appId} (${s.region}): skipped: ${s.reason}`, { singleLine: true }));
          if (!flags.quiet) console.log(formatDatabaseLine(settings.database));
        }
        // An app another process was syncing was not proved by this run: not a plain success.
        const busy = (outcome.summary.skippedApps ?? []).length > 0;
        process.exitCode = !outcome.summary.ok ? (stop.signal.aborted ? EXIT.INTERRUPTED : EXIT.SYNC_FAILED) : busy ? EXIT.SKIPPED : EXIT.OK;
      } finally {
        progress?.stop();
        stop.dispose();
        await rt.close();
      }
    });
}

function selectedApps(settings: Settings, appIds: string[] | undefined): { appId: string; region: string }[] {
  return settings.apps.filter((a) => !appIds?.length || appIds.includes(a.appId));
}

function skippedJson(a: { appId: string; region: string; reason: string }, database: string): Record<string, unknown> {
  return { appId: a.appId, region: a.region, status: 'skipped', reason: a.reason, database: maskDatabaseUrl(database) };
}

/** `sync --dry-run`: list requests only, the database only read; exit 1 when an app could not be listed or proved. */
async function runDryRun(rt: Runtime, settings: Settings, flags: SyncFlags, since: number | undefined, until: number | undefined): Promise<void> {
  const stop = abortOnSignals((sig) => rt.log.warn({ signal: sig }, 'stopping the dry run'));
  try {
    const results = await dryRun({ db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log }, settings, {
      full: flags.full ?? false,
      ...(flags.refetch ? { refetch: true } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {}),
      ...(flags.app ? { appIds: flags.app } : {}),
      signal: stop.signal,
      ...(flags.quiet ? {} : { onRetry: retryWarner(rt.log) }),
    });
    for (const r of results) {
      if (flags.json) console.log(JSON.stringify({ dryRun: true, ...r, database: maskDatabaseUrl(settings.database) }));
      else if (!flags.quiet || r.status !== 'ok') (r.status === 'ok' ? console.log : console.error)(formatDryRun(r));
    }
    const absent = !databaseExists(settings.database);
    if (!flags.json && !flags.quiet) console.log(`${formatDatabaseLine(settings.database)} (${absent ? 'not created yet' : 'only read'}; nothing was written)`);
    process.exitCode = stop.signal.aborted ? EXIT.INTERRUPTED : results.every((r) => r.status === 'ok') ? EXIT.OK : EXIT.SYNC_FAILED;
  } finally {
    stop.dispose();
    await rt.close();
  }
}
