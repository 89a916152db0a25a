import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { resolvePeriod } from '../../export/period.js';
import { collectReportData } from '../../report/collect-report-data.js';
import { renderReportHtml } from '../../report/render-html.js';
import type { ReportData } from '../../report/report-data.js';
import { resolveDestination } from '../../store/destinations/index.js';
import { emptyPeriodNote } from '../empty-period.js';
import { assertKnownApps } from '../known-apps.js';
import { openAtConfiguredTolerance } from '../configured-tolerance.js';
import { sanitizeForTerminal, warnLine, writeOutput } from '../output.js';
import { PERIOD_ZONE_HELP, periodTimezone } from '../period-zone.js';
import { commandSettings } from '../setup.js';
import { appOption, configOption, databaseOption, outOption } from '../shared-options.js';

interface ReportFlags {
  config?: string;
  database?: string;
  month?: string;
  from?: string;
  to?: string;
  timezone?: string;
  app?: string[];
  out?: string;
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('write a self-contained HTML usage report of a period for finance: billing totals, daily usage, reconciliation, top users and groups')
    .option('--month <YYYY-MM>', 'the calendar month to report, e.g. 2025-11')
    .option('--from <date>', 'first day of the period (YYYY-MM-DD), with --to instead of --month')
    .option('--to <date>', 'the day after the last one (YYYY-MM-DD, exclusive)')
    .option('--timezone <tz>', `${PERIOD_ZONE_HELP}; also of its days`)
    .addOption(appOption('report only these apps (default: every app in the database)'))
    .addOption(configOption())
    .addOption(databaseOption())
    .addOption(outOption('the HTML file to write (- for stdout; default report-<period>.html in the current folder)', { short: true }))
    .action(async (flags: ReportFlags) => {
      // Arguments are checked before the database is opened: a typo costs no I/O.
      const resolved = commandSettings(flags);
      const period = resolvePeriod({ month: flags.month, from: flags.from, to: flags.to, timezone: periodTimezone(flags.timezone, resolved) });
      const path = resolved.database;
      // Read-only (open-for-reading.ts): a report does not change the database it describes, and
      // so also runs on a read-only copy.
      const { store, atTolerance, unapplied } = await openAtConfiguredTolerance(resolved);
      let data: ReportData;
      try {
        await assertKnownApps(store.db, flags.app, store.path);
        const empty = await emptyPeriodNote(store.db, period, flags.app ?? []);
        if (empty) console.error(sanitizeForTerminal(empty, { singleLine: true }));
        // The absolute path: the page travels by e-mail, and "calls.db" alone names no file. A URL
        // stays a URL (resolve() would mangle it); collectReportData masks its password.
        const configuredApps = resolved.settings?.apps.map((a) => ({ appId: a.appId, region: a.region }));
        data = await atTolerance((db) => collectReportData(db, period, {
          databasePath: resolveDestination(path).capabilities.localFile ? resolve(path) : path, ...(flags.app ? { appIds: flags.app } : {}), ...(configuredApps ? { configuredApps } : {}),
        }));
        // On the page too: it travels without the stderr it was made with.
        const note = unapplied();
        if (note) data.notices.push(note);
      } finally {
        await store.close();
      }
      for (const n of data.notices) warnLine(n);
      // A default file name, so the demo's closing line `report --month M` works as printed.
      const out = flags.out ?? `report-${period.label}.html`;
      const toStdout = out === '-';
      if (!toStdout) mkdirSync(dirname(resolve(out)), { recursive: true, mode: 0o700 });
      await writeOutput(out, renderReportHtml(data));
      if (!toStdout) {
        const calls = data.billing.filter((r) => r.row_kind === 'total').reduce((s, r) => s + r.calls, 0);
        const mismatches = data.relations.find((r) => r.relation === 'mismatch')?.calls ?? 0;
        console.log(`${out}: report ${period.label} (${period.timezone}), ${data.apps.length} app(s), ${calls} calls, ${mismatches} mismatches`);
      }
    });
}
