import type { Command } from 'commander';
import { scheduleNightlySync } from '../../../jobs/nightly-sync.js';
import { loadConfigFile } from '../../config/load.js';
import { formatAppSummary, runSync } from '../../sync/run-sync.js';
import { EXIT } from '../exit-codes.js';
import { openRuntime } from '../runtime.js';

export function registerSchedule(program: Command): void {
  program
    .command('schedule')
    .description('stay running and sync on the configured cron schedule (default 02:00 UTC nightly)')
    .option('-c, --config <file>', 'config file', process.env.CALLSYNC_CONFIG ?? 'callsync.config.json')
    .option('--run-now', 'run one tick immediately, then exit')
    .action(async (flags: { config: string; runNow?: boolean }) => {
      const settings = loadConfigFile(flags.config, process.env);
      const rt = openRuntime(settings);
      const tick = async (): Promise<boolean> => {
        const summary = await runSync({ db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log }, settings);
        for (const r of summary.results) (r.status === 'ok' ? console.log : console.error)(formatAppSummary(r));
        return summary.ok;
      };
      if (flags.runNow) {
        try {
          process.exitCode = (await tick()) ? EXIT.OK : EXIT.SYNC_FAILED;
        } finally {
          await rt.close();
        }
        return;
      }
      const task = scheduleNightlySync(settings.schedule, async () => {
        await tick();
      });
      console.log(`callsync schedule: next sync at ${task.getNextRun()?.toISOString() ?? '(none)'} (${settings.schedule.cron}, ${settings.schedule.timezone})`);
      const stop = (): void => {
        void Promise.resolve(task.stop()).then(() => rt.close());
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
