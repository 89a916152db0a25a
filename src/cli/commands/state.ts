import type { Command } from 'commander';
import type { CommandSettings } from '../../config/command-settings.js';
import { ConfigError } from '../../config/errors.js';
import { isoUtc } from '../../export/period.js';
import type { Store } from '../../store/connection.js';
import { appState, resetWatermark, storedApps, type AppStateReport } from '../../store/state-repo.js';
import { askLines } from '../ask.js';
import { EXIT } from '../exit-codes.js';
import { openForReading } from '../open-for-reading.js';
import { parseFormat, renderGrid, sanitizeForTerminal } from '../output.js';
import { commandSettings } from '../setup.js';
import { systemClock } from '../../config/clock.js';
import { DEFAULT_LEASE_TTL_MS } from '../../sync/lease.js';
import { whileNotSyncing } from '../../sync/run-sync.js';
import { appOption, configOption, databaseOption, formatOption } from '../shared-options.js';

interface StateFlags {
  config?: string;
  database?: string;
  app?: string;
}

/** Runs shown per app, and retry-list entries listed (the count is always given). */
const RUNS_SHOWN = 5;
const RETRIES_SHOWN = 10;

/** The app and region pairs to act on: configured ones (and any others the database holds), or --app's. */
async function selectApps(store: Store, t: CommandSettings, appId: string | undefined): Promise<{ app_id: string; region: string }[]> {
  const configured = (t.settings?.apps ?? []).map((a) => ({ app_id: a.appId, region: a.region }));
  const stored = await storedApps(store.db);
  const all = [...configured, ...stored.filter((s) => !configured.some((c) => c.app_id === s.app_id && c.region === s.region))];
  if (appId === undefined) return all;
  const chosen = all.filter((a) => a.app_id === appId);
  // An app the config does not list is refused even if old rows of it remain: a typo must not act.
  if (t.settings ? !configured.some((c) => c.app_id === appId) : chosen.length === 0) {
    const names = [...new Set((t.settings ? configured : all).map((a) => a.app_id))];
    throw new ConfigError(`--app ${appId}: not in ${t.settings ? t.configPath : `database ${t.database}`}; ${t.settings ? 'configured' : 'known'} apps: ${names.join(', ') || '(none)'}`);
  }
  return chosen;
}

function printReport(r: AppStateReport): string {
  const lines = [`${r.app_id} (${r.region})`];
  const s = r.state;
  lines.push(`  watermark:        ${s?.watermark_started_at != null ? `${isoUtc(s.watermark_started_at)} (incremental runs re-list from here minus lookbackHours)` : 'none (the next sync is full)'}`);
  lines.push(`  last success:     ${s?.last_success_at != null ? isoUtc(s.last_success_at) : 'never'}`);
  lines.push(`  last full sync:   ${s?.last_full_sync_at != null ? isoUtc(s.last_full_sync_at) : 'never'}`);
  lines.push(`  retry list:       ${r.retryCount} call(s) whose details are fetched again on the next runs${r.retryCount > r.retries.length ? ` (first ${r.retries.length} shown)` : ''}`);
  for (const x of r.retries) lines.push(`    ${x.session_id}  ${x.reason}, ${x.attempts} attempt(s), since ${isoUtc(x.first_at)}`);
  lines.push(`  last runs:`);
  if (r.runs.length === 0) lines.push('    (none)');
  else {
    const rows = r.runs.map((run) => [run.id, run.mode, run.status, isoUtc(run.started_at), run.ended_at === null ? null : run.ended_at - run.started_at, run.calls_seen, run.calls_written, run.error ? run.error.slice(0, 100) : null]);
    lines.push(...renderGrid(['id', 'mode', 'status', 'started', 'seconds', 'calls', 'written', 'error'], rows, 'table').trimEnd().split('\n').slice(0, -1).map((l) => `    ${l}`));
  }
  return `${lines.join('\n')}\n`;
}

export function registerState(program: Command): void {
  const state = program.command('state').description("each app's sync state: watermark, last runs, retry list; reset a watermark");
  state
    .command('show')
    .description('per app: the watermark, the last runs and the retry list')
    .addOption(appOption('only this app', { single: true }))
    .addOption(formatOption(['table', 'json'], 'table'))
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: StateFlags & { format: string }) => {
      const format = parseFormat(flags.format, ['table', 'json']);
      const t = commandSettings(flags);
      const store = await openForReading(t);
      try {
        const apps = await selectApps(store, t, flags.app);
        const reports: AppStateReport[] = [];
        for (const a of apps) reports.push(await appState(store.db, a.app_id, a.region, { runLimit: RUNS_SHOWN, retryLimit: RETRIES_SHOWN }));
        // Run errors quote the service: sanitised like every other printed value.
        process.stdout.write(sanitizeForTerminal(format === 'json' ? `${JSON.stringify({ apps: reports }, null, 2)}\n` : reports.map(printReport).join('\n') || 'no apps configured or stored\n'));
      } finally {
        await store.close();
      }
    });
  state
    .command('reset')
    .description("clear an app's watermark so that its next sync is full (calls and the retry list are kept)")
    .addOption(appOption('the app whose watermark is cleared (every configured region of it)', { single: true, required: true }))
    .option('-y, --yes', 'do not ask (required when not on a terminal)')
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: StateFlags & { app: string; yes?: boolean }) => {
      const t = commandSettings(flags);
      // Opened as readers open it (it must exist), with a writing connection for the watermark.
      const store = await openForReading(t, { write: true });
      try {
        const apps = await selectApps(store, t, flags.app);
        const names = apps.map((a) => `${a.app_id} (${a.region})`).join(', ');
        if (!flags.yes) {
          if (!process.stdin.isTTY) throw new ConfigError(`state reset: not on a terminal, so nothing can be confirmed; add --yes to reset the watermark of ${names}`);
          const answer = await askLines((ask) => ask(`Reset the watermark of ${names}? Its next sync lists every call again (unchanged calls cost no Get Call). [y/N] `));
          if (!/^y(es)?$/i.test(answer.trim())) {
            console.error('callsync: nothing reset');
            process.exitCode = EXIT.USAGE;
            return;
          }
        }
        // Under the lock a sync takes: a sync running now would write its watermark as it ends,
        // undoing the reset without a word.
        const ttlMs = (t.settings?.leaseTtlSeconds ?? DEFAULT_LEASE_TTL_MS / 1000) * 1000;
        const done = await whileNotSyncing({ db: store.db, clock: systemClock }, apps.map((a) => ({ appId: a.app_id, region: a.region })), ttlMs, async () => {
          const nowSec = Math.floor(Date.now() / 1000);
          const lines: string[] = [];
          for (const a of apps) {
            const was = await resetWatermark(store.db, a.app_id, a.region, nowSec);
            const label = `${a.app_id} (${a.region})`;
            lines.push(
              was === undefined ? `${label}: no state stored (never synced); its next sync is full anyway`
                : was === null ? `${label}: no watermark was stored; its next sync is full`
                  : `${label}: watermark ${isoUtc(was)} cleared; its next sync is full`,
            );
          }
          return lines;
        });
        if (done.busy !== undefined) {
          console.error(`callsync: state reset: nothing reset, a sync is running: ${done.busy}; run it again when that sync has ended`);
          process.exitCode = EXIT.SKIPPED;
          return;
        }
        for (const line of done.value) console.log(line);
        process.exitCode = EXIT.OK;
      } finally {
        await store.close();
      }
    });
}
