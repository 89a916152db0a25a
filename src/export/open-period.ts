import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { BillingRow } from './billing.js';
import { isoUtc, type Period } from './period.js';

/**
 * One line per app whose service usage was set beside its figures for a period that has not ended
 * (`now` before its end). The service's Usage Metrics count the period's calls up to the moment they
 * are asked; the database holds them up to the app's last successful sync. The calls between the two
 * were in the usage deltas with nothing said: the app not stale (its sync a few hours old), exit 0,
 * a delta that reads as minutes billed and never used (probe75). Said rather than left to a reader
 * who would have to notice that period_end lies ahead.
 */
export async function openPeriodUsageNotes(db: Kysely<Database>, period: Period, rows: readonly BillingRow[], nowSec: number): Promise<string[]> {
  if (period.end <= nowSec) return [];
  const compared = rows.filter((r) => r.row_kind === 'total' && (r.usage_audio_minutes !== null || r.usage_video_minutes !== null));
  if (!compared.length) return [];
  const states = await db.selectFrom('sync_state').select(['app_id', 'region', 'last_success_at']).execute();
  return compared.map((r) => {
    const success = states.find((s) => s.app_id === r.app_id && s.region === r.region)?.last_success_at ?? null;
    const synced = success === null ? 'no successful sync yet' : `its last successful sync (${isoUtc(success)})`;
    return `app ${r.app_id} (${r.region}): ${r.period} has not ended: the service's usage counts its calls up to now, the database holds them up to ${synced}, so the usage deltas include the calls made since`;
  });
}
