import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { reconcileReport, type ReconcileReport } from '../../reconcile/reconcile-report.js';
import { isoUtc, resolvePeriod, type Period } from '../../export/period.js';
import { staleApps } from '../../export/billing.js';
import { unplacedMinutesNotes } from '../../export/unplaced-minutes.js';
import { EXIT } from '../exit-codes.js';
import { outputWidth, parseFormat, renderGrid, sanitizeForTerminal, warnLine, wrapParagraph } from '../output.js';
import { openAtConfiguredTolerance, openAtGivenTolerance } from '../configured-tolerance.js';
import { formatRows, type Cell } from '../../export/write-table.js';
import { parseTimeArgIn } from '../parse-time.js';
import { PERIOD_ZONE_HELP, periodTimezone } from '../period-zone.js';
import { assertKnownApps } from '../known-apps.js';
import { commandSettings } from '../setup.js';
import { appOption, configOption, databaseOption, formatOption } from '../shared-options.js';

interface ReconcileFlags {
  app?: string[];
  month?: string;
  from?: string;
  to?: string;
  timezone?: string;
  format: string;
  failOnMismatch?: boolean;
  tolerance?: string;
  limit: string;
  config?: string;
  database?: string;
}

/** What the summary's minute columns leave out (as in the billing export); last in the CSV, after every older column. */
const FLAGGED_COLS = ['flagged_calls', 'flagged_user_minutes'] as const;
const MINUTE_COLS = ['app_id', 'region', 'relation', 'calls', 'user_minutes', 'call_total_minutes', 'delta_minutes'] as const;
const SUMMARY_COLS = [...MINUTE_COLS, ...FLAGGED_COLS] as const;
const MISMATCH_COLS = ['app_id', 'session_id', 'type', 'status', 'started_at', 'user_minutes', 'call_audio_minutes', 'call_video_minutes', 'wall_clock_minutes', 'audio_delta_minutes', 'video_delta_minutes', 'issues'] as const;

/**
 * One CSV for both parts, told apart by its first column, `section`: `summary` rows (per app and
 * relation) then `mismatch` rows (per call, worst first, relation `mismatch`). Its columns are the
 * union of both tables; a column a section does not have is empty. Two tables with different headers in one stream, as
 * before, parsed as neither; like `row_kind` in the billing export, a sum over a column is taken
 * within one section.
 */
export const RECONCILE_CSV_COLUMNS = ['section', ...new Set([...MINUTE_COLS, ...MISMATCH_COLS, ...FLAGGED_COLS])] as const;

function renderCsv(report: ReconcileReport): string {
  const rows: Record<string, Cell>[] = [
    ...report.summary.map((r) => ({ section: 'summary', ...Object.fromEntries(SUMMARY_COLS.map((c) => [c, r[c]])) })),
    ...report.mismatches.map((r) => ({ section: 'mismatch', relation: 'mismatch', ...Object.fromEntries(MISMATCH_COLS.map((c) => [c, c === 'started_at' ? isoUtc(r.started_at) : r[c]])) })),
  ];
  return formatRows(rows, RECONCILE_CSV_COLUMNS as unknown as string[], 'csv');
}

/** The window in words and in UTC: a month in a zone is not the UTC month, and the reader must see which it was. */
function windowText(w: Period): string {
  const end = w.end === Number.MAX_SAFE_INTEGER ? '' : isoUtc(w.end);
  return `calls started in ${w.label} (${w.timezone}: ${w.start === 0 ? '' : isoUtc(w.start)}..${end})`;
}

function render(report: ReconcileReport, format: 'table' | 'csv' | 'json', window: Period | undefined): string {
  if (format === 'json') {
    const w = window ? { label: window.label, timezone: window.timezone, from: window.start === 0 ? null : isoUtc(window.start), to: window.end === Number.MAX_SAFE_INTEGER ? null : isoUtc(window.end) } : null;
    return `${JSON.stringify({ ...report, window: w }, null, 2)}\n`;
  }
  if (format === 'csv') return renderCsv(report);
  const maxWidth = outputWidth();
  const summary = renderGrid(SUMMARY_COLS, report.summary.map((r) => SUMMARY_COLS.map((c) => r[c])), format, { maxWidth });
  const mismatches = renderGrid(
    MISMATCH_COLS,
    report.mismatches.map((r) => MISMATCH_COLS.map((c) => (c === 'started_at' ? isoUtc(r.started_at) : r[c]))),
    format,
    { maxWidth },
  );
  const shown = report.mismatches.length < report.mismatchCount ? ` (the ${report.mismatches.length} worst shown; --limit for more)` : '';
  const raised = report.issueCounts.filter((i) => i.calls > 0);
  const issues = raised.length ? wrapParagraph(`Calls per issue code (docs/schema.md explains each): ${raised.map((i) => `${i.issue} ${i.calls}`).join(', ')}`, maxWidth) : '';
  const flagged = report.flaggedCalls
    ? wrapParagraph(`${report.flaggedCalls} call(s) with implausible minutes (${report.flaggedUserMinutes.toFixed(2)} user-minutes) are flagged: their minutes are in flagged_user_minutes, not in the other minute columns above, and are kept out of the totals of billing exports.`, maxWidth)
    : '';
  return `Reconciliation per app and relation (tolerance ${report.tolerance} min)${window ? `, ${windowText(window)}` : ''}:\n${summary}\n${issues}${flagged}${wrapParagraph(`${report.mismatchCount} mismatch(es)${shown}${report.mismatchCount ? ', worst first:' : '.'}`, maxWidth)}${report.mismatchCount ? mismatches : ''}`;
}

/** The --from/--to window as a period the notes can name; none without either bound (every call is then summed). */
function reconcileWindow(flags: ReconcileFlags, tz: string): Period | undefined {
  // --month is the billing export's month, bound for bound (resolvePeriod refuses it beside --from/--to).
  if (flags.month !== undefined) return resolvePeriod({ month: flags.month, from: flags.from, to: flags.to, timezone: tz });
  if (flags.from === undefined && flags.to === undefined) return undefined;
  const from = flags.from !== undefined ? parseTimeArgIn('--from', flags.from, tz) : undefined;
  const to = flags.to !== undefined ? parseTimeArgIn('--to', flags.to, tz) : undefined;
  // As export, report and verify refuse it: an empty range passed --fail-on-mismatch (probe round 17 b).
  if (from !== undefined && to !== undefined && to <= from) throw new ConfigError('--to must be after --from (--to is exclusive)');
  const label = `${flags.from?.trim() ?? ''}..${flags.to?.trim() ?? ''}`;
  return { label, timezone: tz, start: from ?? 0, end: to ?? Number.MAX_SAFE_INTEGER };
}

export function registerReconcile(program: Command): void {
  program
    .command('reconcile')
    .description('per-call minute reconciliation: summary per app and relation, then the mismatches, worst first')
    .addOption(appOption('only these apps'))
    .option('--month <YYYY-MM>', "the calls started in this month (the billing export's month)")
    .option('--from <date>', 'calls started at or after (YYYY-MM-DD, ISO or unix s; a date or a time without an offset is in --timezone)')
    .option('--to <date>', 'calls started before')
    .option('--timezone <tz>', PERIOD_ZONE_HELP)
    .addOption(formatOption(['table', 'csv', 'json'], 'table'))
    .option('--fail-on-mismatch', 'exit 1 when any call is a mismatch')
    .option('--tolerance <minutes>', 'override the tolerance for this report only')
    .option('--limit <n>', 'mismatches to list', '50')
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: ReconcileFlags) => {
      const format = parseFormat(flags.format, ['table', 'csv', 'json']);
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 0) throw new ConfigError('--limit: expected a whole number ≥ 0');
      const tolerance = flags.tolerance === undefined ? undefined : Number(flags.tolerance);
      if (tolerance !== undefined && !(Number.isFinite(tolerance) && tolerance >= 0)) throw new ConfigError('--tolerance: expected minutes ≥ 0, e.g. 0.01');
      // The config is read once: for the database, the tolerance and the zone of the window.
      const resolved = commandSettings(flags);
      const window = reconcileWindow(flags, periodTimezone(flags.timezone, resolved));
      const filter = {
        ...(flags.app ? { appIds: flags.app } : {}),
        ...(window && (flags.month !== undefined || flags.from !== undefined) ? { from: window.start } : {}),
        ...(window && (flags.month !== undefined || flags.to !== undefined) ? { to: window.end } : {}),
      };
      // The tolerance is the flag's, else the config's (when there is one), not whatever the last
      // sync stored: a config changed since then applies at once. Without a config, the database's.
      // --tolerance is written in a transaction that is rolled back: a writing connection. The
      // config's is applied as export and report apply it: only when it differs from the stored one,
      // and on a database this user may only read, the stored one with a line saying so (it failed
      // on a read-only role, exit 2, even with the two equal: probe70).
      const { store, atTolerance, unapplied } = tolerance === undefined ? await openAtConfiguredTolerance(resolved) : await openAtGivenTolerance(resolved, tolerance);
      try {
        await assertKnownApps(store.db, flags.app, store.path);
        const report = await atTolerance((db) => reconcileReport(db, filter, limit));
        const note = unapplied();
        if (note) warnLine(note);
        // A window counts the calls started in it: calls with minutes and no start time are in no
        // window's summary. Left unsaid, `reconcile --from/--to` held fewer user-minutes than the
        // billing export of the same month announced beside its own figures (probe75); said as the
        // export and the report say it.
        if (window) for (const n of await unplacedMinutesNotes(store.db, window, flags.app ?? [])) warnLine(n);
        // An app whose last sync failed, or not since the window ended, holds fewer calls than the
        // service: the export names it, and so does the reconciliation of the same calls. Without a
        // window, judged as a period under way (a success older than 36 hours is stale too).
        const apps = resolved.settings?.apps.map((a) => ({ appId: a.appId, region: a.region }));
        const judged = window ?? { label: 'all calls', timezone: 'UTC', start: 0, end: Number.MAX_SAFE_INTEGER };
        for (const a of await staleApps(store.db, judged, { appIds: flags.app ?? [], ...(apps ? { apps } : {}) })) warnLine(`${a.app_id} (${a.region}) may hold fewer calls than the service: ${a.reason}`);
        // Call fields (type, status, ids) come from the service: no escape sequence reaches the terminal.
        process.stdout.write(sanitizeForTerminal(render(report, format, window)));
        process.exitCode = flags.failOnMismatch && report.mismatchCount > 0 ? EXIT.SYNC_FAILED : EXIT.OK;
      } finally {
        await store.close();
      }
    });
}
