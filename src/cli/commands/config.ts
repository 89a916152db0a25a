import type { Command } from 'commander';
import { validateSchedule } from '../../../jobs/nightly-sync.js';
import { configPath, describeSettings, loadConfigFile } from '../../config/load.js';
import { EXIT } from '../exit-codes.js';

export function registerConfig(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the config and print it resolved (flags > env > file > defaults), every key shown as ***')
    .option('-c, --config <file>', 'config file (default: $CALLSYNC_CONFIG or callsync.config.json)')
    .option('--database <path>', 'database file (overrides config and CALLSYNC_DATABASE)')
    .action((flags: { config?: string; database?: string }) => {
      const path = configPath(flags.config, process.env);
      const settings = loadConfigFile(path, process.env, flags.database ? { database: flags.database } : {});
      validateSchedule(settings.schedule);
      process.stdout.write(`${JSON.stringify(describeSettings(settings), null, 2)}\n`);
      const missing = settings.apps.filter((a) => !a.apiKey);
      if (missing.length) {
        for (const a of missing) console.error(`callsync: app ${a.appId} (${a.region}): environment variable ${a.apiKeyEnv} is not set; export the app's REST API key in it`);
        process.exitCode = EXIT.SYNC_FAILED;
        return;
      }
      console.error(`callsync: ${path} is valid; every app's API key variable is set`);
    });
}
