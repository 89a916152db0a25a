import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { isoUtc } from '../../export/period.js';
import { listRecentRuns } from '../../store/runs-repo.js';
import { assertKnownApps } from '../known-apps.js';
import { queueEntries } from '../job-queue-view.js';
import { openForReading } from '../open-for-reading.js';
import { outputWidth, parseFormat, renderGrid, sanitizeForTerminal } from '../output.js';
import { commandSettings } from '../setup.js';
import { appOption, configOption, databaseOption, formatOption } from '../shared-options.js';

const COLUMNS = ['id', 'run', 'app', 'mode', 'status', 'started', 'seconds', 'pages', 'calls', 'written', 'from_list', 'get_call', 'requests', 'retries', 'rejected', 'error'] as const;

export function registerRuns(program: Command): void {
  program
    .command('runs')
    .description('recent sync runs with their counts, durations and errors')
    .option('--limit <n>', 'how many', '20')
    .addOption(appOption('only this app', { single: true }))
    .addOption(formatOption(['table', 'json'], 'table'))
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: { limit: string; app?: string; format: string; config?: string; database?: string }) => {
      const format = parseFormat(flags.format, ['table', 'json']);
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new ConfigError('--limit: expected a whole number ≥ 1');
      const store = await openForReading(commandSettings(flags));
      try {
        await assertKnownApps(store.db, flags.app ? [flags.app] : undefined, store.path);
        const runs = await listRecentRuns(store.db, limit, flags.app);
        const rows = runs.map((r) => [
          r.id, r.run_id.slice(0, 8), `${r.app_id} (${r.region})`, r.mode, r.status, isoUtc(r.started_at),
          r.ended_at === null ? null : r.ended_at - r.started_at, r.pages, r.calls_seen, r.calls_written, r.calls_from_list,
          r.detail_fetches, r.requests, r.retries, r.rejected, r.error,
        ]);
        // Run errors quote the service: JSON escapes ESC, and what it leaves raw (DEL, C1) is removed.
        process.stdout.write(sanitizeForTerminal(format === 'json' ? `${JSON.stringify(runs, null, 2)}\n` : renderGrid(COLUMNS, rows, 'table', { maxWidth: outputWidth() })));
        if (format === 'table') {
          // Workers on PostgreSQL: what the job engine holds for each app (queued, running, retrying, failed).
          const queue = (await queueEntries(store)).filter((q) => !flags.app || q.app_id === flags.app);
          if (queue.length) process.stdout.write(sanitizeForTerminal(`\njob queue (newest job per app):\n${queue.map((q) => `  ${q.app_id} (${q.region}): ${q.text}`).join('\n')}\n`));
        }
      } finally {
        await store.close();
      }
    });
}
