import type { Command } from 'commander';
import { isoUtc } from '../../export/period.js';
import { appStatuses, type AppStatus } from '../../store/runs-repo.js';
import { databaseExists } from '../../store/destinations/index.js';
import { EXIT } from '../exit-codes.js';
import { openForReading } from '../open-for-reading.js';
import { parseFormat, renderGrid, sanitizeForTerminal } from '../output.js';
import { commandSettings } from '../setup.js';
import { configOption, databaseOption, formatOption } from '../shared-options.js';

/** Statuses of a last run that make `status` (and so a container healthcheck) fail. */
const UNHEALTHY = new Set(['failed', 'partial', 'abandoned']);

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('per app: last successful sync, watermark, calls, rejected records, and whether the last run failed or was abandoned (exit 1 if one was)')
    .addOption(formatOption(['table', 'json'], 'table'))
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: { format: string; config?: string; database?: string }) => {
      const format = parseFormat(flags.format, ['table', 'json']);
      const resolved = commandSettings(flags);
      const { settings, database: path } = resolved;
      if (!databaseExists(path)) {
        // Before the first sync there is nothing wrong to report (a fresh container is healthy).
        console.log(`no database at ${path} yet: never synced${settings ? ` (${settings.apps.length} app(s) configured)` : ''}`);
        process.exitCode = EXIT.OK;
        return;
      }
      // A database no sync has migrated yet (a fresh PostgreSQL one) holds nothing: read as empty.
      const store = await openForReading(resolved, { missing: 'empty' });
      let statuses: AppStatus[];
      try {
        statuses = await appStatuses(store.db);
      } finally {
        await store.close();
      }
      // Configured apps that never ran are listed too: a new app is visible before its first sync.
      for (const a of settings?.apps ?? []) {
        if (!statuses.some((s) => s.app_id === a.appId && s.region === a.region)) {
          statuses.push({ app_id: a.appId, region: a.region, watermark_started_at: null, last_success_at: null, calls: 0, rejected: 0, last_run_status: null, last_run_error: null, last_run_started_at: null });
        }
      }
      // A watermark in the future makes every incremental run stop too early: say so (sync --full recomputes it).
      const nowSec = Math.floor(Date.now() / 1000);
      const future = statuses.filter((s) => s.watermark_started_at !== null && s.watermark_started_at > nowSec + (settings?.maxClockSkewMinutes ?? 10) * 60);
      const failing = statuses.filter((s) => (s.last_run_status !== null && UNHEALTHY.has(s.last_run_status)) || future.includes(s));
      if (format === 'json') process.stdout.write(sanitizeForTerminal(`${JSON.stringify({ healthy: failing.length === 0, apps: statuses.map((s) => ({ ...s, watermark_in_future: future.includes(s) })) }, null, 2)}\n`));
      else {
        const cols = ['app', 'last success', 'watermark', 'calls', 'rejected', 'last run', 'error'] as const;
        const rows = statuses.map((s) => [`${s.app_id} (${s.region})`, isoUtc(s.last_success_at) || 'never', isoUtc(s.watermark_started_at), s.calls, s.rejected, s.last_run_status ?? 'never ran', s.last_run_error]);
        process.stdout.write(renderGrid(cols, rows, 'table'));
        for (const s of future) process.stdout.write(`${sanitizeForTerminal(`WATERMARK IN THE FUTURE: ${s.app_id} (${s.region}) at ${isoUtc(s.watermark_started_at)}; run \`callsync sync --full --app ${s.app_id}\` to recompute it`, { singleLine: true })}\n`);
        const failed = failing.filter((s) => !future.includes(s));
        // An abandoned run names why (its process is gone): a SIGKILLed sync is not mistaken for a running one.
        for (const s of failed.filter((f) => f.last_run_status === 'abandoned')) process.stdout.write(`${sanitizeForTerminal(`ABANDONED: ${s.app_id} (${s.region}): ${s.last_run_error ?? 'its process is gone'}`, { singleLine: true })}\n`);
        process.stdout.write(sanitizeForTerminal(failed.length ? `UNHEALTHY: the last run did not succeed: ${failed.map((s) => `${s.app_id} (${s.region}) ${s.last_run_status}`).join(', ')}\n` : future.length ? 'UNHEALTHY\n' : 'healthy\n'));
      }
      process.exitCode = failing.length ? EXIT.SYNC_FAILED : EXIT.OK;
    });
}
