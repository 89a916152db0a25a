import { maskDatabaseUrl } from '../store/destinations/index.js';
import type { DryRunResult } from '../sync/dry-run.js';
import type { AppSyncResult } from '../sync/sync-app.js';
import { sanitizeForTerminal } from './output.js';

function fmtSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** What the run proved of its listing, in a few words. */
function listingProof(r: AppSyncResult): string {
  const counted = `${r.listedDistinct ?? 0} distinct listed${r.reportedTotal !== undefined ? ` of ${r.reportedTotal} reported` : ''}`;
  if (!r.listingComplete) return `${counted}, NOT proved complete`;
  return r.mode === 'incremental' ? `${counted}, window proved` : `${counted}, proved complete`;
}

/** One line per app (and an error line), for the terminal. */
export function formatAppSummary(r: AppSyncResult): string {
  const head = `${r.appId} (${r.region}): ${r.status === 'ok' ? 'ok' : r.status.toUpperCase()} [${r.mode}]`;
  const body =
    `${r.pages} pages, ${r.callsSeen} calls listed, ${r.callsWritten} written ` +
    `(${r.callsFromList} from the list alone, ${r.detailFetches} needed Get Call), ` +
    `${r.notFound} not found, ${r.rejected} rejected, ${r.groupsSynced} groups (${r.membersSynced} members)` +
    `${r.groupsNotFound ? `, ${r.groupsNotFound} groups gone` : ''}; ` +
    `${r.requests} requests (${r.requestsByKind.list ?? 0} list, ${r.requestsByKind.get ?? 0} get, ${r.requestsByKind.members ?? 0} members), ` +
    `${r.retries} retries, ${r.rateLimited} rate-limited; ${fmtSeconds(r.durationMs)}` +
    (r.listingOrder ? `; listing ${r.listingOrder}, ${listingProof(r)}` : '');
  // The error quotes the service (its messages, ids): printed as one clean line, never as escape sequences.
  return r.error ? `${head}: ${body}\n  error: ${sanitizeForTerminal(r.error, { singleLine: true })}` : `${head}: ${body}`;
}

/** The database line under the summaries: a relative path or a postgres URL (password masked). */
export function formatDatabaseLine(database: string): string {
  return sanitizeForTerminal(`database: ${maskDatabaseUrl(database)}`, { singleLine: true });
}

/** `sync --json`: one object per app, the same facts as the summary line, for scripts. */
export function appSummaryJson(r: AppSyncResult, database: string): Record<string, unknown> {
  return {
    appId: r.appId,
    region: r.region,
    status: r.status,
    mode: r.mode,
    pages: r.pages,
    callsListed: r.callsSeen,
    callsWritten: r.callsWritten,
    callsFromList: r.callsFromList,
    detailFetches: r.detailFetches,
    auditedAgain: r.auditedAgain,
    notFound: r.notFound,
    rejected: r.rejected,
    failedCalls: r.failedCalls,
    unreadCalls: r.unreadCalls,
    disputedCalls: r.disputedCalls,
    notFoundListed: r.notFoundListed,
    groupsSynced: r.groupsSynced,
    membersSynced: r.membersSynced,
    groupsNotFound: r.groupsNotFound,
    requests: r.requests,
    requestsByKind: r.requestsByKind,
    retries: r.retries,
    rateLimited: r.rateLimited,
    durationMs: Math.round(r.durationMs),
    listingOrder: r.listingOrder ?? null,
    listedDistinct: r.listedDistinct ?? null,
    reportedTotal: r.reportedTotal ?? null,
    listingComplete: r.listingComplete ?? null,
    error: r.error ?? null,
    database: maskDatabaseUrl(database),
  };
}

/** `sync --dry-run`: one line per app (and a note line when the listing leaves something to say). */
export function formatDryRun(r: DryRunResult): string {
  const head = `${r.appId} (${r.region}): dry run [${r.mode}]`;
  if (r.status === 'failed') return sanitizeForTerminal(`${head}: FAILED after ${r.pages} pages: ${r.error ?? 'unknown error'}`, { singleLine: true });
  const body =
    `${r.listed} calls listed in ${r.pages} pages: ${r.new} new, ${r.changed} changed, ${r.unchanged} unchanged` +
    `${r.invalid ? `, ${r.invalid} invalid entries` : ''}; a sync would make ${r.getCalls} Get Call requests` +
    `${r.followUpGetCalls ? ` (+ up to ${r.followUpGetCalls} for live, retry-listed and unsettled calls)` : ''}` +
    (r.groupsUnnamed ? ` and list the members of at least ${r.groups} groups (${r.groupsUnnamed} entries do not say who the call went to)` : r.groups ? ` and list the members of ${r.groups} groups` : '') +
    '; ' +
    (r.stoppedAtWindow ? 'incremental window listed' : r.listingComplete ? 'listing proved complete' : 'listing NOT proved complete');
  const line = sanitizeForTerminal(`${head}: ${body}`, { singleLine: true });
  return r.listingNote ? `${line}\n  ${sanitizeForTerminal(r.listingNote, { singleLine: true })}` : line;
}
