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
