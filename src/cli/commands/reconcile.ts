import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { reconcileReport, type ReconcileReport } from '../../reconcile/reconcile-report.js';
import { isoUtc, type Period } from '../../export/period.js';
import { unplacedMinutesNotes } from '../../export/unplaced-minutes.js';
import { EXIT } from '../exit-codes.js';
import { outputWidth, parseFormat, renderGrid, sanitizeForTerminal, warnLine, wrapParagraph } from '../output.js';
import { openAtConfiguredTolerance, openAtGivenTolerance } from '../configured-tolerance.js';
import { formatRows, type Cell } from '../../export/write-table.js';
import { parseTimeArg } from '../parse-time.js';
import { assertKnownApps } from '../known-apps.js';
import { commandSettings } from '../setup.js';
import { appOption, configOption, databaseOption, formatOption } from '../shared-options.js';

interface ReconcileFlags {
  app?: string[];
  from?: string;
  to?: string;
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

function render(report: ReconcileReport, format: 'table' | 'csv' | 'json'): string {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
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
  return `Reconciliation per app and relation (tolerance ${report.tolerance} min):\n${summary}\n${issues}${flagged}${wrapParagraph(`${report.mismatchCount} mismatch(es)${shown}${report.mismatchCount ? ', worst first:' : '.'}`, maxWidth)}${report.mismatchCount ? mismatches : ''}`;
}

/** The --from/--to window as a period the unplaced-minutes notes can name; none without either bound (every call is then summed). */
function reconcileWindow(filter: { from?: number; to?: number }): Period | undefined {
  if (filter.from === undefined && filter.to === undefined) return undefined;
  const start = filter.from ?? 0;
  const end = filter.to ?? Number.MAX_SAFE_INTEGER;
  return { label: `${filter.from !== undefined ? isoUtc(filter.from) : ''}..${filter.to !== undefined ? isoUtc(filter.to) : ''}`, timezone: 'UTC', start, end };
}

export function registerReconcile(program: Command): void {
  program
    .command('reconcile')
    .description('per-call minute reconciliation: summary per app and relation, then the mismatches, worst first')
    .addOption(appOption('only these apps'))
    .option('--from <date>', 'calls started at or after (YYYY-MM-DD, ISO or unix s; UTC unless an offset is given)')
    .option('--to <date>', 'calls started before')
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
      const filter = {
        ...(flags.app ? { appIds: flags.app } : {}),
        ...(flags.from ? { from: parseTimeArg('--from', flags.from) } : {}),
        ...(flags.to ? { to: parseTimeArg('--to', flags.to) } : {}),
      };
      // As export, report and verify refuse it: an empty range passed --fail-on-mismatch (probe round 17 b).
      if (filter.from !== undefined && filter.to !== undefined && filter.to <= filter.from) throw new ConfigError('--to must be after --from (--to is exclusive)');
      // The config is read once: for the database and for the tolerance.
      const resolved = commandSettings(flags);
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
        const window = reconcileWindow(filter);
        if (window) for (const n of await unplacedMinutesNotes(store.db, window, flags.app ?? [])) warnLine(n);
        // Call fields (type, status, ids) come from the service: no escape sequence reaches the terminal.
        process.stdout.write(sanitizeForTerminal(render(report, format)));
        process.exitCode = flags.failOnMismatch && report.mismatchCount > 0 ? EXIT.SYNC_FAILED : EXIT.OK;
      } finally {
        await store.close();
      }
    });
}
