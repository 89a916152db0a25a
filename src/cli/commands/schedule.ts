import type { Command } from 'commander';
import { scheduleNightlySync } from '../../schedule/nightly-sync.js';
import { assertApiKeys } from '../../config/api-keys.js';
import { formatAppSummary } from '../app-summary.js';
import { runScheduledTick, type TickResult } from '../../schedule/scheduled-tick.js';
import { EXIT } from '../exit-codes.js';
import { sanitizeForTerminal } from '../output.js';
import { retryWarner } from '../progress.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { fileSettings } from '../setup.js';
import { configOption, databaseOption, logLevelOption } from '../shared-options.js';
import { abortOnSignals } from '../shutdown.js';
import { destinationOf } from '../../store/destinations/index.js';
import { printFollowUp, runEngineWorker } from './schedule-workers.js';

function printTick(result: TickResult, quiet: boolean): number {
  if (result.skipped) {
    console.error(sanitizeForTerminal(`callsync: skipped: ${result.reason}`, { singleLine: true }));
    return EXIT.SKIPPED;
  }
  for (const r of result.summary.results) if (!quiet || r.status !== 'ok') (r.status === 'ok' ? console.log : console.error)(formatAppSummary(r));
  if (!quiet) for (const s of result.summary.skippedApps ?? []) console.log(sanitizeForTerminal(`${s.appId} (${s.region}): skipped: ${s.reason}`, { singleLine: true }));
  printFollowUp(result, quiet);
  if (result.summary.ok) return EXIT.OK;
  return result.summary.results.some((r) => r.status === 'interrupted') ? EXIT.INTERRUPTED : EXIT.SYNC_FAILED;
}

export function registerSchedule(program: Command): void {
  program
    .command('schedule')
    .description('stay running and sync on schedule.cron (default 02:00 UTC nightly), then reconcile and export')
    .addOption(configOption())
    .addOption(databaseOption())
    .addOption(logLevelOption())
    .option('--run-now', 'run one tick immediately, then exit')
    .option('-q, --quiet', 'print only failures')
    .action(async (flags: { config?: string; database?: string; logLevel?: string; runNow?: boolean; quiet?: boolean }) => {
      const resolved = fileSettings(flags);
      const { settings } = resolved;
      assertApiKeys(settings);
      const rt: Runtime = await openRuntime(resolved, { quiet: flags.quiet ?? false });
      const deps = { db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log };
      // Retries are logged as they wait (at most one line per app every 10 s): a dead API at 02:00 is visible in the log.
      const retries = flags.quiet ? {} : { onRetry: retryWarner(rt.log) };
      const stop = abortOnSignals((sig) => rt.log.warn({ signal: sig }, 'stopping: finishing the current page, then exiting'));
      if (destinationOf(rt.store.db).capabilities.concurrentWriters) {
        // Several workers on one PostgreSQL database: the job engine shares the apps.
        const auth = { passwordEnv: settings.databasePasswordEnv, env: resolved.env };
        await runEngineWorker(rt, settings, { auth, runNow: flags.runNow ?? false, quiet: flags.quiet ?? false, stop, ...retries });
        return;
      }
      if (flags.runNow) {
        try {
          process.exitCode = printTick(await runScheduledTick(deps, settings, { ...retries, signal: stop.signal }), flags.quiet ?? false);
        } finally {
          stop.dispose();
          await rt.close();
        }
        return;
      }
      let running: Promise<void> | undefined;
      const task = scheduleNightlySync(
        settings.schedule,
        async (slot) => {
          // A slot whose time passed while the machine slept (or the process was stopped) runs once on
          // waking: said, as node-cron's dropped slot was not (probe78 F2).
          if (slot.lateMs >= 60_000) {
            const line = `the tick of ${slot.at.toISOString()} runs late, at ${new Date(rt.clock.now()).toISOString()}${slot.missed ? ` (${slot.missed} earlier slot(s) passed unrun)` : ''}: the machine slept or the process was not running`;
            rt.log.warn({ slot: slot.at.toISOString(), missed: slot.missed }, line);
            console.error(sanitizeForTerminal(`callsync: ${line}`, { singleLine: true }));
          }
          running = (async () => {
            try {
              printTick(await runScheduledTick(deps, settings, { ...retries, signal: stop.signal }), flags.quiet ?? false);
            } catch (err) {
              rt.log.error({ err: (err as Error).message }, 'scheduled tick failed');
              console.error(sanitizeForTerminal(`callsync: scheduled tick failed: ${(err as Error).message}`, { singleLine: true }));
            }
            console.log(`next sync at ${task.getNextRun()?.toISOString() ?? '(none)'}`);
          })();
          await running;
        },
        {
          clock: rt.clock,
          onOverlap: (slot) => {
            const line = `the tick of ${slot.at.toISOString()} is skipped: the previous tick is still running`;
            rt.log.warn({ slot: slot.at.toISOString() }, line);
            console.error(`callsync: ${line}`);
          },
        },
      );
      console.log(`callsync schedule: next sync at ${task.getNextRun()?.toISOString() ?? '(none)'} (${settings.schedule.cron}, ${settings.schedule.timezone}); SIGTERM stops it`);
      stop.signal.addEventListener('abort', () => {
        void (async () => {
          await task.stop();
          await running; // the tick stops at its next page boundary and marks its runs interrupted
          stop.dispose();
          await rt.close();
          process.exitCode = EXIT.OK;
        })();
      });
    });
}
