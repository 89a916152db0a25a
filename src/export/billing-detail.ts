import type { Kysely } from 'kysely';
import type { ReconciliationAdditions } from '../reconcile/issue-codes.js';
import type { Database } from '../store/schema.js';
import { isoUtc, type Period } from './period.js';

/** One line per call with its reconciliation, for disputes. */
export interface BillingDetailRow {
  period: string;
  app_id: string;
  region: string;
  session_id: string;
  /** As stored: null when the service sent none. */
  type: string | null;
  status: string | null;
  started_at: string;
  ended_at: string;
  participant_rows: number;
  user_minutes: number;
  call_total_minutes: number | null;
  wall_clock_minutes: number | null;
  delta_minutes: number;
  relation: string;
  issues: string;
  /** 1 when the call's minutes are implausible: in `flagged_user_minutes`, not `user_minutes`, of the totals. */
  flagged: number;
}

export const BILLING_DETAIL_COLUMNS: readonly (keyof BillingDetailRow)[] = [
  'period', 'app_id', 'region', 'session_id', 'type', 'status', 'started_at', 'ended_at', 'participant_rows',
  'user_minutes', 'call_total_minutes', 'wall_clock_minutes', 'delta_minutes', 'relation', 'issues', 'flagged',
];

export async function computeBillingDetail(db: Kysely<Database>, period: Period, opts: { appIds?: readonly string[] } = {}): Promise<BillingDetailRow[]> {
  let q = db
    .withTables<ReconciliationAdditions>()
    .selectFrom('call_reconciliation')
    .select(['app_id', 'region', 'session_id', 'type', 'status', 'started_at', 'ended_at', 'participant_rows', 'participant_total_minutes', 'total_duration_minutes', 'wall_clock_minutes', 'total_delta_minutes', 'relation', 'issues', 'flagged'])
    .where('started_at', '>=', period.start)
    .where('started_at', '<', period.end);
  if (opts.appIds?.length) q = q.where('app_id', 'in', [...opts.appIds]);
  const rows = await q.orderBy('app_id').orderBy('region').orderBy('started_at').orderBy('session_id').execute();
  return rows.map((r) => ({
    period: period.label,
    app_id: r.app_id,
    region: r.region,
    session_id: r.session_id,
    type: r.type,
    status: r.status,
    started_at: isoUtc(r.started_at),
    ended_at: isoUtc(r.ended_at),
    participant_rows: r.participant_rows,
    user_minutes: r.participant_total_minutes,
    call_total_minutes: r.total_duration_minutes,
    wall_clock_minutes: r.wall_clock_minutes,
    delta_minutes: -r.total_delta_minutes,
    relation: r.relation,
    issues: r.issues,
    flagged: Number(r.flagged),
  }));
}
