import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { loadConfigFile } from '../../config/load.js';
import { formatAppSummary, runSync } from '../../sync/run-sync.js';
import { EXIT } from '../exit-codes.js';
import { parseTimeArg } from '../parse-time.js';
import { openRuntime } from '../runtime.js';

interface SyncFlags {
  config: string;
  full?: boolean;
  since?: string;
  until?: string;
  app?: string[];
  quiet?: boolean;
}

export function registerSync(program: Command): void {
  program
    .command('sync')
    .description('sync calls of every configured app into the database (incremental unless --full)')
    .option('-c, --config <file>', 'config file', process.env.CALLSYNC_CONFIG ?? 'callsync.config.json')
    .option('--full', 'ignore the watermark and re-list every call (unchanged calls cost no Get Call)')
    .option('--since <date>', 'backfill calls started at or after this date (YYYY-MM-DD, ISO or unix s); keeps the watermark')
    .option('--until <date>', 'backfill calls started before this date; keeps the watermark')
    .option('--app <appId...>', 'sync only these apps')
    .option('-q, --quiet', 'print only failures')
    .action(async (flags: SyncFlags) => {
      const settings = loadConfigFile(flags.config, process.env);
      const since = flags.since !== undefined ? parseTimeArg('--since', flags.since) : undefined;
      const until = flags.until !== undefined ? parseTimeArg('--until', flags.until) : undefined;
      if (since !== undefined && until !== undefined && since >= until) throw new ConfigError('--since must be before --until');
      const unknown = (flags.app ?? []).filter((id) => !settings.apps.some((a) => a.appId === id));
      if (unknown.length) throw new ConfigError(`--app ${unknown.join(', ')}: not in ${flags.config}; configured apps: ${settings.apps.map((a) => a.appId).join(', ')}`);
      const rt = openRuntime(settings, { quiet: flags.quiet ?? false });
      try {
        const summary = await runSync({ db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log }, settings, {
          full: flags.full ?? false,
          ...(since !== undefined ? { since } : {}),
          ...(until !== undefined ? { until } : {}),
          ...(flags.app ? { appIds: flags.app } : {}),
        });
        for (const r of summary.results) {
          if (!flags.quiet || r.status !== 'ok') (r.status === 'ok' ? console.log : console.error)(formatAppSummary(r));
        }
        process.exitCode = summary.ok ? EXIT.OK : EXIT.SYNC_FAILED;
      } finally {
        await rt.close();
      }
    });
}
