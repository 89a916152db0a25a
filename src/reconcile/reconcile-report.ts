import { sql, type Kysely, type Transaction } from 'kysely';
import { InternalError } from '../config/errors.js';
import type { Database } from '../store/schema.js';
import { saveTolerance, TOLERANCE_SETTING } from '../store/settings-repo.js';
import { ISSUE_CODES, type IssueCode, type ReconciliationAdditions } from './issue-codes.js';

export interface ReconcileFilter {
  appIds?: readonly string[];
  /** started_at window, unix seconds, [from, to). */
  from?: number;
  to?: number;
}

export interface RelationSummary {
  app_id: string;
  region: string;
  relation: string;
  calls: number;
  user_minutes: number;
  call_total_minutes: number;
  delta_minutes: number;
}

export interface MismatchRow {
  app_id: string;
  session_id: string;
  type: string | null;
  status: string | null;
  started_at: number | null;
  user_minutes: number;
  call_audio_minutes: number | null;
  call_video_minutes: number | null;
  wall_clock_minutes: number | null;
  audio_delta_minutes: number;
  video_delta_minutes: number;
  issues: string;
}

/** Calls carrying one issue code (a call with several counts under each). */
export interface IssueCount {
  issue: IssueCode;
  calls: number;
}

export interface ReconcileReport {
  tolerance: number;
  summary: RelationSummary[];
  /** Every code, in the view's order, zeros included: "0 calls with negative minutes" is news too. */
  issueCounts: IssueCount[];
  /** Calls with implausible minutes (`flagged`), and their user-minutes, which billing counts apart. */
  flaggedCalls: number;
  flaggedUserMinutes: number;
  mismatches: MismatchRow[];
  mismatchCount: number;
}

type Db = Kysely<Database> | Transaction<Database>;

class Rollback<T> extends Error {
  constructor(readonly value: T) {
    super('rollback');
  }
}

/**
 * Runs `fn` with the views applying `tolerance`, without keeping it: the setting is changed inside
 * a transaction that is rolled back, so one report's tolerance never leaks into the next.
 */
export async function withTolerance<T>(db: Kysely<Database>, tolerance: number, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  try {
    await db.transaction().execute(async (trx) => {
      await saveTolerance(trx, tolerance);
      throw new Rollback(await fn(trx));
    });
  } catch (err) {
    if (err instanceof Rollback) return err.value as T;
    throw err;
  }
  throw new InternalError('unreachable: withTolerance returns from its catch');
}

/** The view's calls the filter selects (with the columns the view gained after its `Database` type). */
function filtered(db: Db, filter: ReconcileFilter) {
  let q = db.withTables<ReconciliationAdditions>().selectFrom('call_reconciliation');
  if (filter.appIds?.length) q = q.where('app_id', 'in', [...filter.appIds]);
  if (filter.from !== undefined) q = q.where('started_at', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('started_at', '<', filter.to);
  return q;
}

/** Summary per app and relation, then the mismatches, worst (largest absolute delta) first. SQL only. */
export async function reconcileReport(db: Db, filter: ReconcileFilter, limit: number): Promise<ReconcileReport> {
  const base = filtered(db, filter);

  const summary = await base
    .select((eb) => [
      'app_id',
      'region',
      'relation',
      eb.fn.countAll<number>().as('calls'),
      sql<number>`coalesce(sum(participant_total_minutes), 0)`.as('user_minutes'),
      sql<number>`coalesce(sum(coalesce(total_duration_minutes, 0)), 0)`.as('call_total_minutes'),
      sql<number>`coalesce(sum(participant_total_minutes) - sum(coalesce(total_duration_minutes, 0)), 0)`.as('delta_minutes'),
    ])
    .groupBy(['app_id', 'region', 'relation'])
    .orderBy('app_id')
    .orderBy('region')
    .orderBy('relation')
    .execute();

  // The summary already counts the mismatches: a third pass over every call would only repeat it.
  const mismatchCount = summary.filter((s) => s.relation === 'mismatch').reduce((n, s) => n + Number(s.calls), 0);
  const mismatches = await base
    .where('relation', '=', 'mismatch')
    .select([
      'app_id', 'session_id', 'type', 'status', 'started_at',
      'participant_total_minutes as user_minutes',
      'total_audio_minutes as call_audio_minutes',
      'total_video_minutes as call_video_minutes',
      'wall_clock_minutes', 'audio_delta_minutes', 'video_delta_minutes', 'issues',
    ])
    .orderBy(sql`abs(audio_delta_minutes) + abs(video_delta_minutes)`, 'desc')
    .orderBy('app_id')
    .orderBy('session_id')
    .limit(limit)
    .execute();
  const { issueCounts, flaggedCalls, flaggedUserMinutes } = await countIssues(db, filter);
  const tol = await db.selectFrom('callsync_settings').select('value').where('key', '=', TOLERANCE_SETTING).executeTakeFirst();
  return {
    tolerance: Number(tol?.value ?? 0.01),
    summary: summary.map((s) => ({ ...s, calls: Number(s.calls), user_minutes: Number(s.user_minutes), call_total_minutes: Number(s.call_total_minutes), delta_minutes: Number(s.delta_minutes) })),
    issueCounts,
    flaggedCalls,
    flaggedUserMinutes,
    mismatches,
    mismatchCount,
  };
}

/**
 * Calls per issue code and the flagged figures. The view keeps `issues` as one text (the contract
 * for ad hoc SQL), built from some twenty checks per call. Matching each code in SQL (a LIKE per
 * code) made SQLite build that text once per code and call, 18 times: most of `callsync reconcile`'s
 * time over a million calls. Grouped by the text, it is built once per call, and the few distinct
 * texts are split into their codes here (each code counted as one whole item, as before). The
 * flagged figures are their own pass: summing the minutes in one statement keeps the figure exactly
 * what it was.
 */
async function countIssues(db: Db, filter: ReconcileFilter): Promise<Pick<ReconcileReport, 'issueCounts' | 'flaggedCalls' | 'flaggedUserMinutes'>> {
  const groups = await filtered(db, filter)
    .select((eb) => ['issues', eb.fn.countAll<number | string>().as('calls')])
    .groupBy('issues')
    .execute();
  const counts = new Map<string, number>();
  for (const g of groups) {
    for (const code of new Set(g.issues.split(','))) counts.set(code, (counts.get(code) ?? 0) + Number(g.calls));
  }
  // Grouped by the flag, it is computed once per call (a sum(case when flagged …) per figure computed
  // it once per figure); the flagged group's sum adds the same minutes in the same order as before.
  const byFlag = await filtered(db, filter)
    .select((eb) => ['flagged', eb.fn.countAll<number | string>().as('calls'), sql<number | string | null>`sum(participant_total_minutes)`.as('user_minutes')])
    .groupBy('flagged')
    .execute();
  const flagged = byFlag.find((g) => Number(g.flagged) === 1);
  return {
    issueCounts: ISSUE_CODES.map((issue) => ({ issue, calls: counts.get(issue) ?? 0 })),
    flaggedCalls: Number(flagged?.calls ?? 0),
    flaggedUserMinutes: Number(flagged?.user_minutes ?? 0),
  };
}
