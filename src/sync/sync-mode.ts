import type { SyncStateTable } from '../store/schema.js';
import type { SyncMode } from './sync-result.js';

/**
 * Full or incremental. An incremental run proves its window by ids and the rest of the listing by
 * counts only (the service's total against the calls stored): calls removed at the service stay
 * stored, so as many removals as late, backdated additions beyond the window balance the count and
 * hide those calls. Only a listing read to its end sees them; one is due every `fullSyncEveryDays`
 * (0: every run), so such a call is missing for at most that long (`callsync verify` finds it
 * sooner). A full run that was not proved does not count: the next run is full again.
 */
export function syncModeFor(state: SyncStateTable | undefined, opts: { full?: boolean | undefined; backfill: boolean }, nowSeconds: number, fullSyncEveryDays: number): { mode: SyncMode; fullDue: boolean } {
  if (opts.backfill) return { mode: 'backfill', fullDue: false };
  if (opts.full || state?.watermark_started_at == null) return { mode: 'full', fullDue: false };
  const last = state.last_full_sync_at;
  const fullDue = last == null || nowSeconds - last >= fullSyncEveryDays * 86_400;
  return { mode: fullDue ? 'full' : 'incremental', fullDue };
}
