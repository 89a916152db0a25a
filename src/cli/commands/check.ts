import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { systemClock } from '../../config/clock.js';
import { loadHttpAgent } from '../../source/http-agent.js';
import { checkApp, CHECK_TIMEOUT_MS } from '../access-check.js';
import { EXIT } from '../exit-codes.js';
import { sanitizeForTerminal } from '../output.js';
import { fileSettings } from '../setup.js';
import { appOption, configOption } from '../shared-options.js';

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description("try each app's API key against the service: one cheap request per API (Calls, Chat); exit 1 if any fails")
    .addOption(configOption())
    .addOption(appOption('check only these apps'))
    .action(async (flags: { config?: string; app?: string[] }) => {
      const { settings, configPath: cfgPath } = fileSettings(flags);
      const unknown = (flags.app ?? []).filter((id) => !settings.apps.some((a) => a.appId === id));
      if (unknown.length) throw new ConfigError(`--app ${unknown.join(', ')}: not in ${cfgPath}; configured apps: ${settings.apps.map((a) => a.appId).join(', ')}`);
      const apps = settings.apps.filter((a) => !flags.app?.length || flags.app.includes(a.appId));
      const timeout = Math.min(settings.requestTimeoutMs, CHECK_TIMEOUT_MS);
      // connect.timeout bounds a host that drops SYNs: the probe answers "timed out" in seconds.
      const Agent = await loadHttpAgent();
      const dispatcher = new Agent({ connect: { timeout: 5_000 }, headersTimeout: timeout, bodyTimeout: timeout });
      try {
        const results = await Promise.all(apps.map((app) => checkApp({ dispatcher, clock: systemClock }, settings, app)));
        const lines = results.flat();
        const width = Math.max(...lines.map((l) => l.app.length));
        for (const l of lines) {
          // Service messages are quoted in some verdicts: no control sequence reaches the terminal.
          console.log(sanitizeForTerminal(`${l.app.padEnd(width)}  ${l.api}: ${l.text}`, { singleLine: true }));
        }
        const failed = lines.filter((l) => !l.ok).length;
        if (failed) console.error(`callsync: ${failed} of ${lines.length} checks failed`);
        process.exitCode = failed ? EXIT.SYNC_FAILED : EXIT.OK;
      } finally {
        await dispatcher.close();
      }
    });
}
