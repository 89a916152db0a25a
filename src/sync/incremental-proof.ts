import type { Kysely } from 'kysely';
import { countRejectedListedOnly, countStoredCalls, loadCallStates, markNotFound, storedFinalCallIdsAfter, storedCallIdsSince } from '../store/calls-repo.js';
import type { CallListing } from '../source/paginate-calls.js';
import type { Database } from '../store/schema.js';
import { pendingById, type Pending } from './page-planner.js';

/** Stored calls of the window that the listing did not show, asked for one by one at most. */
const MAX_UNLISTED_TO_FETCH = 100;

export interface WindowProofInput {
  db: Kysely<Database>;
  appId: string;
  region: string;
  /** Start of the window (unix seconds) the incremental listing covered. */
  cutoff: number;
  /** Session ids the listing showed in this run. */
  listedInWindow: ReadonlySet<string>;
  /** The smallest total List Calls reported in this run. */
  reportedTotal: number | undefined;
  /** Get Call for these calls, writing what they answer (not-found marks them). */
  fetchAndWrite: (pending: Pending[]) => Promise<void>;
  flush: () => Promise<void>;
}

/**
 * Checks what an incremental run can check of a listing it read only part of:
 * - every call stored for the window must have been listed again: one that was not is asked for
 *   with Get Call; gone at the service, it is marked not found (explained); still there, the
 *   listing skipped it — evidence that it may have skipped others;
 * - the service's total must not exceed what is stored (plus listed entries kept aside as rejected):
 *   more calls at the service than in the database means some were never listed (pages numbered
 *   differently, a call backdated beyond the window, a listing that drops entries).
 * Returns why everything must be listed once more, or nothing when the window checks out. Costs
 * no request in the normal case.
 */
export async function proveIncrementalWindow(input: WindowProofInput): Promise<{ relist?: string }> {
  const { db, appId, region } = input;
  const unlisted = (await storedCallIdsSince(db, appId, region, input.cutoff)).filter((id) => !input.listedInWindow.has(id));
  if (unlisted.length > MAX_UNLISTED_TO_FETCH) {
    return { relist: `${unlisted.length} calls stored for the window were not listed again (first: ${unlisted[0]})` };
  }
  if (unlisted.length > 0) {
    await input.fetchAndWrite(unlisted.map((sessionId) => pendingById(sessionId)));
    await input.flush();
    const after = await loadCallStates(db, appId, unlisted);
    const skipped = unlisted.filter((id) => after.get(id)?.notFound !== true);
    if (skipped.length > 0) return { relist: `${skipped.length} call(s) stored for the window exist at the service but were not listed (first: ${skipped[0]})` };
  }
  if (input.reportedTotal !== undefined) {
    const held = (await countStoredCalls(db, appId, region)) + (await countRejectedListedOnly(db, appId, region));
    if (input.reportedTotal > held) return { relist: `List Calls reports ${input.reportedTotal} calls, the database holds ${held}` };
  }
  return {};
}

/**
 * After a full listing proved complete: stored final calls it did not show are marked not found
 * (kept, and billed as before; the service no longer lists them). Incremental runs hold the
 * service's total against the calls stored and not marked, so an unmarked call removed at the
 * service (outside any window, nothing else marks it) left a slack that hid every call later added
 * with a time beyond the window until the next full listing (a hostile fake: a 60-minute call
 * missing, ok, night after night). A call listed again later is stored again, unmarked. Live calls
 * are the live follow-up's, which asks Get Call and takes one as gone only after
 * LIVE_NOT_FOUND_RUNS runs (a live call can be briefly unknown). Returns how many were marked.
 */
export async function markCallsNoLongerListed(db: Kysely<Database>, appId: string, region: string, listing: Pick<CallListing, 'listed'>, now: number): Promise<number> {
  const gone: string[] = [];
  for (let after = 0; ; ) {
    const rows = await storedFinalCallIdsAfter(db, appId, region, after, 10_000);
    if (rows.length === 0) break;
    for (const r of rows) if (!listing.listed(r.session_id)) gone.push(r.session_id);
    after = rows[rows.length - 1]!.call_id;
  }
  if (gone.length > 0) await db.transaction().execute((trx) => markNotFound(trx, appId, gone, now, true));
  return gone.length;
}
