import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Why a call is on the retry list. `unanswered_audit`: an audited list entry whose Get Call gave no
 * comparable answer; the next answer is compared with the entry (see ListAudit).
 */
export type RetryReason = 'unusable_detail' | 'get_failed' | 'live_not_found' | 'unconfirmed_not_found' | 'unreadable_entry' | 'unanswered_audit';

export interface RetryEntry {
  sessionId: string;
  reason: RetryReason;
  attempts: number;
}

/** The calls of an app and region whose details must be fetched again, oldest first. */
export async function listRetries(db: Db, appId: string, region: string): Promise<RetryEntry[]> {
  const rows = await db
    .selectFrom('detail_retries')
    .select(['session_id', 'reason', 'attempts'])
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .orderBy('first_at')
    .execute();
  return rows.map((r) => ({ sessionId: r.session_id, reason: r.reason as RetryReason, attempts: Number(r.attempts) }));
}

/** Puts calls on the retry list, or counts one more attempt for those already on it. */
export async function recordRetries(db: Db, appId: string, region: string, entries: readonly { sessionId: string; reason: RetryReason }[], now: number): Promise<void> {
  for (const e of entries) {
    await db
      .insertInto('detail_retries')
      .values({ app_id: appId, region, session_id: e.sessionId, reason: e.reason, attempts: 1, first_at: now, last_at: now })
      .onConflict((oc) => oc.columns(['app_id', 'session_id']).doUpdateSet((eb) => ({ reason: e.reason, attempts: eb('detail_retries.attempts', '+', 1), last_at: now })))
      .execute();
  }
}

/** Takes calls off the retry list (their details arrived, or they are settled as not found). */
export async function clearRetries(db: Db, appId: string, sessionIds: readonly string[]): Promise<void> {
  for (let i = 0; i < sessionIds.length; i += 500) {
    await db.deleteFrom('detail_retries').where('app_id', '=', appId).where('session_id', 'in', sessionIds.slice(i, i + 500)).execute();
  }
}
