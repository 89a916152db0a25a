import type { Command } from 'commander';
import { describeSettings } from '../../config/load.js';
import { maskDatabaseUrl, resolveDestination } from '../../store/destinations/index.js';
import { EXIT } from '../exit-codes.js';
import { fileSettings } from '../setup.js';
import { configOption, databaseOption } from '../shared-options.js';

export function registerConfig(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the config and print it resolved (flags > env > file > defaults), every key and password shown as ***')
    .addOption(configOption())
    .addOption(databaseOption())
    .action((flags: { config?: string; database?: string }) => {
      const { settings, configPath: path, env } = fileSettings(flags);
      // A postgres:// URL may carry its password: shown as postgres://user:***@host/db.
      process.stdout.write(`${JSON.stringify({ ...describeSettings(settings), database: maskDatabaseUrl(settings.database) }, null, 2)}\n`);
      const problems = settings.apps.filter((a) => !a.apiKey).map((a) => `app ${a.appId} (${a.region}): environment variable ${a.apiKeyEnv} is not set; export the app's REST API key in it`);
      const destination = resolveDestination(settings.database);
      problems.push(...destination.settingProblems(settings.database, { passwordEnv: settings.databasePasswordEnv, env }));
      if (problems.length) {
        for (const p of problems) console.error(`callsync: ${p}`);
        process.exitCode = EXIT.SYNC_FAILED;
        return;
      }
      console.error(`callsync: ${path} is valid; every app's API key variable is set${settings.databasePasswordEnv && destination.capabilities.passwordLogin ? `, and ${settings.databasePasswordEnv} (databasePasswordEnv)` : ''}`);
    });
}
