import type { Command } from 'commander';
import { unplacedMinutesNotes } from '../../export/unplaced-minutes.js';
import { openPeriodUsageNotes } from '../../export/open-period.js';
import { BILLING_COLUMNS, BILLING_DETAIL_COLUMNS, computeBilling, computeBillingDetail, staleApps, usageNotAsked, withUsage, zeroUsageNotes } from '../../export/billing.js';
import { resolvePeriod } from '../../export/period.js';
import { ConfigError } from '../../config/errors.js';
import { formatRows } from '../../export/write-table.js';
import { systemClock, unixSeconds } from '../../config/clock.js';
import { loadHttpAgent } from '../../source/http-agent.js';
import { openAtConfiguredTolerance } from '../configured-tolerance.js';
import { parseFormat, sanitizeForTerminal, warnLine, writeOutput } from '../output.js';
import { commandSettings, fileSettings } from '../setup.js';
import { appOption, configOption, databaseOption, formatOption, outOption } from '../shared-options.js';
import { emptyPeriodNote } from '../empty-period.js';
import { EXIT } from '../exit-codes.js';
import { PERIOD_ZONE_HELP, periodTimezone } from '../period-zone.js';
import { assertKnownApps } from '../known-apps.js';

interface ExportFlags {
  month?: string;
  from?: string;
  to?: string;
  timezone?: string;
  app?: string[];
  format: string;
  out?: string;
  withUsage?: boolean;
  detail?: boolean;
  config?: string;
  database?: string;
}

export function registerExport(program: Command): void {
  const exp = program.command('export').description('write exports a finance person can open');
  exp
    .command('billing')
    .description('billing reconciliation per app, region, period and call type (CSV or JSON)')
    .option('--month <YYYY-MM>', 'the billing month')
    .option('--from <YYYY-MM-DD>', 'period start (instead of --month)')
    .option('--to <YYYY-MM-DD>', 'period end, exclusive')
    .option('--timezone <tz>', `${PERIOD_ZONE_HELP}; a call belongs to the period of its started_at`)
    .addOption(appOption('only these apps'))
    .addOption(formatOption(['csv', 'json'], 'csv'))
    .addOption(outOption('output file (default stdout)'))
    .option('--with-usage', "add the service's Usage Metrics for the period and their deltas (needs the apps' keys)")
    .option('--detail', 'one line per call with its reconciliation instead of the totals')
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: ExportFlags) => {
      const format = parseFormat(flags.format, ['csv', 'json']) as 'csv' | 'json';
      // The per-call lines have no usage columns: together, the comparison asked for was silently not made (probe68 F6).
      if (flags.withUsage && flags.detail) throw new ConfigError('--with-usage compares the totals with the service and --detail lists calls; give one or the other');
      const appIds = flags.app ?? [];
      // --with-usage needs the apps' keys: the file then must exist (refused before any I/O).
      const withKeys = flags.withUsage ? fileSettings(flags) : undefined;
      const resolved = withKeys ?? commandSettings(flags);
      const period = resolvePeriod({ ...flags, timezone: periodTimezone(flags.timezone, resolved) });
      const { store, atTolerance, unapplied } = await openAtConfiguredTolerance(resolved);
      let text: string;
      try {
        await assertKnownApps(store.db, appIds, store.path);
        const empty = await emptyPeriodNote(store.db, period, appIds);
        if (empty) console.error(sanitizeForTerminal(empty, { singleLine: true }));
        for (const n of await unplacedMinutesNotes(store.db, period, appIds)) warnLine(n);
        if (flags.detail) {
          text = formatRows(await atTolerance((db) => computeBillingDetail(db, period, { appIds })), BILLING_DETAIL_COLUMNS, format);
          const note = unapplied();
          if (note) warnLine(note);
        } else {
          // Configured apps too: one never synced had no row at all, and with --with-usage a row of
          // zeros marked stale=0 beside the service's minutes (probe round 17 a, 5).
          const apps = resolved.settings?.apps.map((a) => ({ appId: a.appId, region: a.region }));
          const stale = await staleApps(store.db, period, { appIds, ...(apps ? { apps } : {}) });
          for (const a of stale) warnLine(`${a.app_id} (${a.region}) is stale, its rows are marked stale=1: ${a.reason}`);
          let rows = await atTolerance((db) => computeBilling(db, period, { appIds, stale }));
          const note = unapplied();
          if (note) warnLine(note);
          if (withKeys) {
            const { settings } = withKeys;
            // Loaded only here: the HTTP client and the sync stage are most of what the export would
            // otherwise load at startup, for an option most exports go without.
            const [Agent, { fetchUsage }] = await Promise.all([loadHttpAgent(), import('../../sync/fetch-usage.js')]);
            const dispatcher = new Agent({ keepAliveTimeout: 5_000 });
            try {
              const fetched = await fetchUsage({ dispatcher, clock: systemClock }, settings, period, appIds);
              for (const w of fetched.warnings) warnLine(w);
              // An app with calls that no configured app stands for was never asked (usageNotAsked).
              const asked = settings.apps.filter((a) => !appIds.length || appIds.includes(a.appId));
              const failures = [...fetched.failures, ...usageNotAsked(rows, asked)];
              if (failures.length) {
                // Nothing is written: usage columns left empty would read as "the service counted nothing".
                for (const f of failures) console.error(sanitizeForTerminal(`callsync: export billing --with-usage: ${f}; nothing written (run without --with-usage for our own figures)`, { singleLine: true }));
                process.exitCode = EXIT.SYNC_FAILED;
                return;
              }
              rows = withUsage(rows, fetched.usage, period);
              for (const w of zeroUsageNotes(rows)) warnLine(w);
              for (const w of await openPeriodUsageNotes(store.db, period, rows, unixSeconds(systemClock))) warnLine(w);
            } finally {
              await dispatcher.close();
            }
          }
          text = formatRows(rows, BILLING_COLUMNS, format);
        }
      } finally {
        await store.close();
      }
      await writeOutput(flags.out, text);
    });
}
