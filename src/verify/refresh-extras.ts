import pLimit from 'p-limit';
import type { AppSettings } from '../config/load.js';
import type { CallsApi } from '../source/calls-api.js';
import { ApiError } from '../source/errors.js';
import { upsertCalls, markNotFound } from '../store/calls-repo.js';
import { insertRejected } from '../store/runs-repo.js';
import type { CallRows, NewRejectedRow } from '../store/schema.js';
import { unixSeconds } from '../config/clock.js';
import { apiCallToRows, parseCall } from '../transform/call-rows.js';
import { rejectedRow } from '../transform/rejected-row.js';
import { apiProblem, type VerifyDeps } from './verify-app.js';

export interface ExtrasRefresh {
  /** Calls Get Call answered, now stored as it said (final or still live). */
  stored: number;
  /** Calls the service no longer has: flagged not_found_at. */
  notFound: number;
  /** Answers that did not parse: filed in rejected_records, the stored row left alone. */
  rejected: number;
  /** Calls whose Get Call kept failing: nothing written for them. */
  failed: string[];
  /** Why the refresh stopped (auth, plan), when it did. */
  problem?: string;
}

/**
 * Asks Get Call for each stored live call the listing no longer shows, and stores its answer the
 * way sync does for such calls (sync re-fetches them after an incremental listing, but a backfill
 * never does): the call as answered with no list fingerprint, not-found flagged, an unparseable
 * answer rejected. Everything fetched is written in one transaction.
 */
export async function refreshExtras(deps: VerifyDeps, app: AppSettings, api: CallsApi, ids: readonly string[], concurrency: number, runId: string): Promise<ExtrasRefresh> {
  const out: ExtrasRefresh = { stored: 0, notFound: 0, rejected: 0, failed: [] };
  const rows: CallRows[] = [];
  const notFound: string[] = [];
  const rejects: NewRejectedRow[] = [];
  const limit = pLimit(Math.max(1, concurrency));
  let stop: string | undefined;
  await Promise.all(
    ids.map((id) =>
      limit(async () => {
        if (stop) {
          out.failed.push(id);
          return;
        }
        try {
          const got = await api.getCall(id);
          const now = unixSeconds(deps.clock);
          if (!got.found) {
            // Only the service's code proves it gone; a bare 404 leaves the call as it is stored.
            if (got.confirmed) notFound.push(id);
            else out.failed.push(id);
            return;
          }
          if ('unusable' in got) {
            out.failed.push(id);
            return;
          }
          const parsed = parseCall(got.raw, id);
          if (!parsed.ok) {
            rejects.push(rejectedRow({ appId: app.appId, region: app.region, runId, now }, 'get_call', parsed.key, parsed.reason, got.raw));
            return;
          }
          rows.push(apiCallToRows(parsed.call, got.raw, { appId: app.appId, region: app.region, now, source: 'detail', listFingerprint: null }));
        } catch (err) {
          if (err instanceof ApiError && (err.kind === 'auth' || err.kind === 'account' || err.kind === 'aborted')) stop ??= apiProblem(app, err);
          out.failed.push(id);
        }
      }),
    ),
  );
  const now = unixSeconds(deps.clock);
  await deps.db.transaction().execute(async (trx) => {
    await upsertCalls(trx, rows);
    if (notFound.length) await markNotFound(trx, app.appId, notFound, now);
    if (rejects.length) out.rejected = await insertRejected(trx, rejects);
  });
  out.stored = rows.length;
  out.notFound = notFound.length;
  out.failed.sort();
  if (stop) out.problem = stop;
  return out;
}
