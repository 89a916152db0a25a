import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { verifyAndRepair, verifyApps, type AppRepair, type VerifyReport } from '../../verify/run-verify.js';
import type { VerifyWindow } from '../../verify/stored-state.js';
import type { AppVerification } from '../../verify/verify-app.js';
import { EXIT } from '../exit-codes.js';
import { parseFormat, sanitizeForTerminal, renderGrid } from '../output.js';
import { openForReading } from '../open-for-reading.js';
import { openRuntime } from '../runtime.js';
import { fileSettings } from '../setup.js';
import { appOption, configOption, databaseOption, formatOption } from '../shared-options.js';
import { abortOnSignals } from '../shutdown.js';

/** Session ids and problems come from the service: nothing it sends may drive the terminal. */
function out(text: string): void {
  process.stdout.write(sanitizeForTerminal(text));
}

interface VerifyFlags {
  app?: string[];
  since?: string;
  until?: string;
  repair?: boolean;
  format: string;
  config?: string;
  database?: string;
}

/** Ids shown per category in the table; --format json lists them all. */
const IDS_SHOWN = 5;

/** A UTC day, YYYY-MM-DD, as unix seconds of its midnight; anything else is a usage error. */
function parseDay(flag: string, value: string): number {
  const v = value.trim();
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(v) ? Date.parse(`${v}T00:00:00Z`) : NaN;
  // Round-tripping refuses days a calendar lacks (2025-02-30) that Date.parse would roll over.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== v) {
    throw new ConfigError(`${flag} ${JSON.stringify(value)} is not a date; use YYYY-MM-DD (a UTC day, e.g. 2025-11-01)`);
  }
  return ms / 1000;
}

function day(sec: number): string {
  return new Date(sec * 1000).toISOString().slice(0, 10);
}

function describeWindow(w: VerifyWindow): string {
  if (w.since === undefined && w.until === undefined) return 'every listed call';
  const from = w.since !== undefined ? `from ${day(w.since)}` : 'everything';
  return `${from}${w.until !== undefined ? ` until ${day(w.until)} (exclusive)` : ' on'}, UTC`;
}

function listingCell(v: AppVerification): string {
  if (v.listingComplete) return v.listing?.stoppedEarly ? 'complete (to the window)' : 'complete';
  return v.listing ? 'NOT PROVED COMPLETE' : 'not read';
}

function idsLine(label: string, ids: readonly string[], note?: (id: string) => string): string {
  const shown = ids.slice(0, IDS_SHOWN).map((id) => (note ? `${id} (${note(id)})` : id));
  const more = ids.length > IDS_SHOWN ? `, … (+${ids.length - IDS_SHOWN} more; --format json lists every id)` : '';
  return `  ${label} ${ids.length}: ${shown.join(', ')}${more}`;
}

function renderReport(title: string, report: VerifyReport): string {
  const cols = ['app', 'listed', 'stored', 'missing', 'changed', 'extra', 'rejected', 'listing'] as const;
  const rows = report.apps.map((v) => [`${v.appId} (${v.region})`, v.listed, v.stored, v.missing.length, v.changed.length, v.extra.length, v.rejected.length, listingCell(v)]);
  let out = `${title}\n${renderGrid(cols, rows, 'table')}`;
  for (const v of report.apps) {
    const lines: string[] = [];
    if (v.missing.length) lines.push(idsLine('missing', v.missing));
    if (v.changed.length) lines.push(idsLine('changed', v.changed, (id) => (v.changedFields[id] ?? []).join(', ')));
    if (v.extra.length) lines.push(idsLine('extra', v.extra));
    if (v.rejected.length) lines.push(idsLine('rejected (not counted against verify)', v.rejected));
    if (v.problem) lines.push(`  problem: ${v.problem}`);
    if (lines.length) out += `${v.appId} (${v.region}):\n${lines.join('\n')}\n`;
  }
  return out;
}

function verdict(report: VerifyReport): string {
  if (report.ok) return 'OK: the database holds what the service lists, for every app.\n';
  const bad = report.apps.filter((v) => !v.listingComplete || v.problem || v.missing.length || v.changed.length || v.extra.length);
  return `NOT VERIFIED: ${bad.map((v) => `${v.appId} (${v.missing.length} missing, ${v.changed.length} changed, ${v.extra.length} extra${v.listingComplete ? '' : ', listing not proved complete'})`).join('; ')}.\n`;
}

function repairLine(r: AppRepair): string {
  if (r.skipped) return `  ${r.appId} (${r.region}): ${r.skipped}`;
  const parts: string[] = [];
  if (r.sync) parts.push(`sync ${r.sync.status}: ${r.sync.callsWritten} calls written, ${r.sync.detailFetches} needed Get Call${r.sync.error ? ` (${r.sync.error})` : ''}`);
  if (r.extras) {
    const e = r.extras;
    parts.push(`extra calls asked for: ${e.stored} stored as answered, ${e.notFound} no longer exist, ${e.rejected} rejected, ${e.failed.length} failed${e.problem ? ` (${e.problem})` : ''}`);
  }
  return `  ${r.appId} (${r.region}): ${parts.join('; ') || 'nothing done'}`;
}

/** Problems go to stderr, one line each, in both formats: stdout stays the report alone. */
function printProblems(report: VerifyReport): void {
  for (const v of report.apps) if (v.problem) console.error(sanitizeForTerminal(`callsync: ${v.problem}`, { singleLine: true }));
}

function asJson(report: VerifyReport): Record<string, unknown> {
  return {
    ok: report.ok,
    apps: report.apps.map((v) => ({
      appId: v.appId, region: v.region, listed: v.listed, stored: v.stored, missing: v.missing, changed: v.changed, extra: v.extra, rejected: v.rejected,
      listingComplete: v.listingComplete, ...(v.problem ? { problem: v.problem } : {}), changedFields: v.changedFields, ...(v.listing ? { listing: v.listing } : {}),
    })),
  };
}

export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description("re-list calls from the service and compare with the database: missing, changed and extra calls (exit 1 if any); --repair fixes them")
    .addOption(appOption('only these apps'))
    .option('--since <date>', 'calls from this UTC day on (YYYY-MM-DD)')
    .option('--until <date>', 'calls before this UTC day (YYYY-MM-DD, exclusive)')
    .option('--repair', 'bring the database to what the service says (as sync would; the watermark is kept), then verify again')
    .addOption(formatOption(['table', 'json'], 'table'))
    .addOption(configOption())
    .addOption(databaseOption())
    .action(async (flags: VerifyFlags) => {
      const format = parseFormat(flags.format, ['table', 'json']);
      const since = flags.since !== undefined ? parseDay('--since', flags.since) : undefined;
      const until = flags.until !== undefined ? parseDay('--until', flags.until) : undefined;
      if (since !== undefined && until !== undefined && since >= until) throw new ConfigError('--since must be before --until (until is exclusive: --since 2025-11-01 --until 2025-12-01 is November)');
      const resolved = fileSettings(flags);
      const { settings, configPath: cfgPath } = resolved;
      const unknown = (flags.app ?? []).filter((id) => !settings.apps.some((a) => a.appId === id));
      if (unknown.length) throw new ConfigError(`--app ${unknown.join(', ')}: not in ${cfgPath}; configured apps: ${settings.apps.map((a) => a.appId).join(', ')}`);
      const apps = flags.app?.length ? settings.apps.filter((a) => flags.app!.includes(a.appId)) : settings.apps;
      const window: VerifyWindow = { ...(since !== undefined ? { since } : {}), ...(until !== undefined ? { until } : {}) };

      // The read part opens the database as every reader does (it must exist; an old schema is
      // brought up to date); --repair writes through the runtime's own connection.
      await (await openForReading(resolved)).close();
      const rt = await openRuntime(resolved);
      const stop = abortOnSignals((sig) => rt.log.warn({ signal: sig }, 'stopping verify'));
      try {
        const deps = { db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log };
        let final: VerifyReport;
        if (flags.repair) {
          const r = await verifyAndRepair(deps, settings, apps, window, stop.signal);
          final = r.after;
          printProblems(r.after);
          if (format === 'json') {
            out(`${JSON.stringify({ ...asJson(r.after), before: asJson(r.before), repairs: r.repairs }, null, 2)}\n`);
          } else {
            out(renderReport(`Before repair (${describeWindow(window)}):`, r.before));
            out(`Repair:\n${r.repairs.map(repairLine).join('\n')}\n`);
            out(renderReport(`After repair (${describeWindow(window)}):`, r.after));
            out(verdict(r.after));
          }
        } else {
          final = await verifyApps(deps, settings, apps, window, stop.signal);
          printProblems(final);
          if (format === 'json') out(`${JSON.stringify(asJson(final), null, 2)}\n`);
          else out(renderReport(`Service listing vs database (${describeWindow(window)}):`, final) + verdict(final));
        }
        process.exitCode = stop.signal.aborted ? EXIT.INTERRUPTED : final.ok ? EXIT.OK : EXIT.SYNC_FAILED;
      } finally {
        stop.dispose();
        await rt.close();
      }
    });
}
