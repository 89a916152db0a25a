import type { Command } from 'commander';
import { isoUtc } from '../../export/period.js';
import { appStatuses, type AppStatus } from '../../store/runs-repo.js';
import { failedTick, queueEntries, type QueueEntry } from '../job-queue-view.js';
import { databaseExists } from '../../store/destinations/index.js';
import { EXIT } from '../exit-codes.js';
import { missedSlots, readTickAt } from '../../schedule/tick-record.js';
import { openForReading } from '../open-for-reading.js';
import { parseFormat, renderGrid, sanitizeForTerminal } from '../output.js';
import { commandSettings } from '../setup.js';
import { scheduledExportState, scheduledExportLines } from '../scheduled-export-view.js';
import { configOption, databaseOption, formatOption } from '../shared-options.js';

/** Statuses of a last run that make `status` (and so a container healthcheck) fail. */
const UNHEALTHY = new Set(['failed', 'partial', 'interrupted', 'abandoned']);

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('per app: last successful sync, watermark, calls, rejected records, and whether the last run failed, was partial, interrupted or abandoned (exit 1 if one was)')
    .addOption(formatOption(['table', 'json'], 'table'))
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: { format: string; config?: string; database?: string }) => {
      const format = parseFormat(flags.format, ['table', 'json']);
      const resolved = commandSettings(flags);
      const { settings, database: path } = resolved;
      if (!databaseExists(path)) {
        // Before the first sync there is nothing wrong to report (a fresh container is healthy).
        // Under --format json as JSON too: a script parsing it met a line of text (probe round 21).
        const note = `no database at ${path} yet: never synced${settings ? ` (${settings.apps.length} app(s) configured)` : ''}`;
        console.log(format === 'json' ? sanitizeForTerminal(JSON.stringify({ healthy: true, apps: [], note }, null, 2)) : note);
        process.exitCode = EXIT.OK;
        return;
      }
      // A database no sync has migrated yet (a fresh PostgreSQL one) holds nothing: read as empty.
      const store = await openForReading(resolved, { missing: 'empty' });
      let statuses: AppStatus[];
      let queue: QueueEntry[];
      let tickFailed: string | undefined;
      let exportState: Awaited<ReturnType<typeof scheduledExportState>>;
      let lastTick: number | undefined;
      try {
        statuses = await appStatuses(store.db);
        queue = await queueEntries(store);
        tickFailed = await failedTick(store);
        exportState = await scheduledExportState(store.db, settings?.schedule, Math.floor(Date.now() / 1000));
        lastTick = await readTickAt(store.db);
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
      const queued = (s: AppStatus): QueueEntry | undefined => queue.find((q) => q.app_id === s.app_id && q.region === s.region);
      // An app whose newest engine job failed every attempt, with no successful sync since it was
      // queued (the same second counts against it: unix seconds cannot order the two): its attempts
      // may have written no run at all (its lock held elsewhere: "another
      // callsync process is syncing it now"), so its last run still read ok or running (probe67 F2).
      const jobFailed = (s: AppStatus): boolean => {
        const q = queued(s);
        return q?.state === 'failed' && (s.last_success_at ?? 0) <= (q.queued_at ?? 0);
      };
      // A schedule that ticked here once and has since let a whole slot pass (none of its syncs running).
      const missed = settings && lastTick !== undefined && !statuses.some((s) => s.last_run_status === 'running') ? missedSlots(settings.schedule, lastTick, nowSec) : undefined;
      const behind = missed && lastTick !== undefined ? { lastTick: isoUtc(lastTick), missed: missed.map((d) => isoUtc(d.getTime() / 1000)) } : undefined;
      const failing = statuses.filter((s) => (s.last_run_status !== null && UNHEALTHY.has(s.last_run_status)) || future.includes(s) || jobFailed(s));
      if (format === 'json') {
        const apps = statuses.map((s) => {
          const q = queued(s);
          return { ...s, watermark_in_future: future.includes(s), ...(queue.length ? { queue: q ? { state: q.state, text: q.text } : null } : {}) };
        });
        process.stdout.write(sanitizeForTerminal(`${JSON.stringify({ healthy: failing.length === 0 && !tickFailed && !exportState?.overdue.length && !behind, apps, ...(tickFailed ? { tickFailed } : {}), ...(behind ? { scheduleBehind: behind } : {}), ...(exportState ? { scheduledExport: exportState } : {}) }, null, 2)}\n`));
      } else {
        // On PostgreSQL with workers, each app's place in the job engine's queue comes first.
        const cols = [...(queue.length ? ['app', 'queue'] : ['app']), 'last success', 'watermark', 'calls', 'rejected', 'last run', 'error'];
        const rows = statuses.map((s) => [`${s.app_id} (${s.region})`, ...(queue.length ? [queued(s)?.text ?? 'not queued'] : []), isoUtc(s.last_success_at) || 'never', isoUtc(s.watermark_started_at), s.calls, s.rejected, s.last_run_status ?? 'never ran', s.last_run_error]);
        process.stdout.write(renderGrid(cols, rows, 'table'));
        for (const s of future) process.stdout.write(`${sanitizeForTerminal(`WATERMARK IN THE FUTURE: ${s.app_id} (${s.region}) at ${isoUtc(s.watermark_started_at)}; run \`callsync sync --full --app ${s.app_id}\` to recompute it`, { singleLine: true })}\n`);
        const failed = failing.filter((s) => !future.includes(s));
        // An abandoned run names why (its process is gone): a SIGKILLed sync is not mistaken for a running one.
        for (const s of failed.filter((f) => f.last_run_status === 'abandoned')) process.stdout.write(`${sanitizeForTerminal(`ABANDONED: ${s.app_id} (${s.region}): ${s.last_run_error ?? 'its process is gone'}`, { singleLine: true })}\n`);
        if (tickFailed) process.stdout.write(`${sanitizeForTerminal(`TICK FAILED: ${tickFailed}`, { singleLine: true })}\n`);
        for (const line of scheduledExportLines(exportState)) process.stdout.write(`${sanitizeForTerminal(line, { singleLine: true })}\n`);
        if (behind) process.stdout.write(`SCHEDULE BEHIND: the last tick ran at ${behind.lastTick}; the slots at ${behind.missed.join(' and ')} passed without one (is \`callsync schedule\` running?)\n`);
        process.stdout.write(sanitizeForTerminal(failed.length ? `UNHEALTHY: the last run did not succeed: ${failed.map((s) => `${s.app_id} (${s.region}) ${jobFailed(s) && !UNHEALTHY.has(s.last_run_status ?? '') ? `its sync job ${queued(s)!.text}` : s.last_run_status}`).join(', ')}\n` : future.length || tickFailed || exportState?.overdue.length || behind ? 'UNHEALTHY\n' : 'healthy\n'));
      }
      process.exitCode = failing.length || tickFailed || exportState?.overdue.length || behind ? EXIT.SYNC_FAILED : EXIT.OK;
    });
}
