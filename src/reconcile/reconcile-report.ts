import { sql, type Kysely, type Transaction } from 'kysely';
import { InternalError } from '../config/errors.js';
import type { Database } from '../store/schema.js';
import { saveTolerance, storedTolerance } from '../store/settings-repo.js';
import { ISSUE_CODES, type IssueCode, type ReconciliationAdditions } from './issue-codes.js';

export interface ReconcileFilter {
  appIds?: readonly string[];
  /** started_at window, unix seconds, [from, to). */
  from?: number;
  to?: number;
}

/**
 * Calls of one app, region and relation. `calls` counts every call; the minute figures cover the
 * unflagged calls only, as the billing export's and the report's do, and the flagged calls (their
 * minutes implausible) are counted apart in `flagged_calls` and `flagged_user_minutes`.
 */
export interface RelationSummary {
  app_id: string;
  region: string;
  relation: string;
  calls: number;
  user_minutes: number;
  call_total_minutes: number;
  delta_minutes: number;
  flagged_calls: number;
  flagged_user_minutes: number;
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

/** The calls the filter selects, in `call_figure_rows` (the view's figures, stored per call). */
function figures(db: Db, filter: ReconcileFilter) {
  let q = db.selectFrom('call_figure_rows');
  // Qualified: the mismatches join calls, which has these columns too.
  if (filter.appIds?.length) q = q.where('call_figure_rows.app_id', 'in', [...filter.appIds]);
  if (filter.from !== undefined) q = q.where('call_figure_rows.started_at', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('call_figure_rows.started_at', '<', filter.to);
  return q;
}

/** One group of calls alike in app, region, relation, flag and issue codes, as the query sums it. */
interface FigureGroup {
  app_id: string;
  region: string;
  relation: string;
  flagged: number | string;
  issue_bits: number | string;
  calls: number | string;
  user_minutes: number | string | null;
  call_total_minutes: number | string | null;
}

/**
 * Summary per app and relation, the calls per issue code, the flagged figures, then the mismatches,
 * worst (largest absolute delta) first. SQL only.
 *
 * Read from `call_figure_rows`, which the store keeps equal to what `call_reconciliation` computes
 * per call (at the tolerance in force: withTolerance's change refills it by trigger inside its
 * transaction). The
 * view's some thirty comparisons per call, made on each of four passes over every call, were most
 * of the time of `callsync reconcile` over a million calls. Now one pass over the narrow table,
 * grouped by everything the report tells apart (a few hundred groups), folded here; the sums of a
 * figure over a summary row are those of its groups, so a sum may differ from one SQL sum over the
 * same calls in its last bits, never more. The listed mismatches are then read from the view by key.
 */
export async function reconcileReport(db: Db, filter: ReconcileFilter, limit: number): Promise<ReconcileReport> {
  const groups: FigureGroup[] = await figures(db, filter)
    .select((eb) => [
      'app_id',
      'region',
      'relation',
      'flagged',
      'issue_bits',
      eb.fn.countAll<number | string>().as('calls'),
      sql<number | string | null>`sum(participant_total_minutes)`.as('user_minutes'),
      sql<number | string | null>`sum(call_total_minutes)`.as('call_total_minutes'),
    ])
    // By type too: SQLite stores the table in the order of these columns, and aggregates as it scans
    // (a group by without type would sort every call). Type is folded away below.
    .groupBy(['app_id', 'region', 'type', 'relation', 'flagged', 'issue_bits'])
    // The summary's order is the database's order of (app_id, region, relation), as before.
    .orderBy('app_id')
    .orderBy('region')
    .orderBy('relation')
    .execute();
  const summary = summarize(groups);
  // The summary already counts the mismatches: another pass over every call would only repeat it.
  const mismatchCount = summary.filter((s) => s.relation === 'mismatch').reduce((n, s) => n + s.calls, 0);
  // The stored figures name a call by call_id; the order among equal sizes is by session_id, which
  // calls has. Joining calls for every mismatch (a row read at random per call: 0.3-0.7 s at 200,000
  // calls) is avoided: only those at least as large as the limit-th largest (ties at the cut
  // included, so the list is the one the full order gives) are joined. Sizes are sums of absolute
  // values, never below 0: -1 lets every mismatch in when there are fewer than `limit`.
  const mismatching = figures(db, filter).where('call_figure_rows.relation', '=', 'mismatch');
  const cut = mismatching.select('call_figure_rows.mismatch_size').orderBy('call_figure_rows.mismatch_size', 'desc').limit(1).offset(Math.max(0, limit - 1));
  const worst = mismatching
    .where('call_figure_rows.mismatch_size', '>=', (eb) => eb.fn.coalesce(cut, sql.lit(-1)))
    .innerJoin('calls', 'calls.call_id', 'call_figure_rows.call_id')
    .select(['call_figure_rows.app_id', 'calls.session_id', 'call_figure_rows.mismatch_size'])
    .orderBy('call_figure_rows.mismatch_size', 'desc')
    .orderBy('call_figure_rows.app_id')
    .orderBy('calls.session_id')
    .limit(limit)
    .as('k');
  const mismatches = await db
    .withTables<ReconciliationAdditions>()
    .selectFrom(worst)
    .innerJoin('call_reconciliation as v', (j) => j.onRef('v.app_id', '=', 'k.app_id').onRef('v.session_id', '=', 'k.session_id'))
    .select([
      'v.app_id', 'v.session_id', 'v.type', 'v.status', 'v.started_at',
      'v.participant_total_minutes as user_minutes',
      'v.total_audio_minutes as call_audio_minutes',
      'v.total_video_minutes as call_video_minutes',
      'v.wall_clock_minutes', 'v.audio_delta_minutes', 'v.video_delta_minutes', 'v.issues',
    ])
    .orderBy('k.mismatch_size', 'desc')
    .orderBy('k.app_id')
    .orderBy('k.session_id')
    .execute();
  return { tolerance: await storedTolerance(db), summary, ...countIssues(groups), mismatches, mismatchCount };
}

/**
 * One row per app, region and relation, in the order the groups come (the query's order). A flagged
 * group's minutes go to flagged_user_minutes, not user_minutes: summed in, one participant stated
 * with 50,000 minutes made a relation's user-minutes 50,000 above the billing export's and the
 * report's for the same calls, and the CSV said nothing of it (probe68 F2).
 */
function summarize(groups: readonly FigureGroup[]): RelationSummary[] {
  const rows = new Map<string, RelationSummary>();
  for (const g of groups) {
    const key = JSON.stringify([g.app_id, g.region, g.relation]);
    let r = rows.get(key);
    if (!r) {
      r = { app_id: g.app_id, region: g.region, relation: g.relation, calls: 0, user_minutes: 0, call_total_minutes: 0, delta_minutes: 0, flagged_calls: 0, flagged_user_minutes: 0 };
      rows.set(key, r);
    }
    r.calls += Number(g.calls);
    if (Number(g.flagged) === 1) {
      r.flagged_calls += Number(g.calls);
      r.flagged_user_minutes += Number(g.user_minutes ?? 0);
      continue;
    }
    r.user_minutes += Number(g.user_minutes ?? 0);
    r.call_total_minutes += Number(g.call_total_minutes ?? 0);
  }
  return [...rows.values()].map((r) => ({ ...r, delta_minutes: r.user_minutes - r.call_total_minutes }));
}

/**
 * Calls per issue code (bit i of `issue_bits` is ISSUE_CODES[i]; a call with several counts under
 * each) and the flagged calls with their user-minutes.
 */
function countIssues(groups: readonly FigureGroup[]): Pick<ReconcileReport, 'issueCounts' | 'flaggedCalls' | 'flaggedUserMinutes'> {
  const counts = new Array<number>(ISSUE_CODES.length).fill(0);
  let flaggedCalls = 0;
  let flaggedUserMinutes = 0;
  for (const g of groups) {
    const n = Number(g.calls);
    const bits = Number(g.issue_bits);
    for (let i = 0; i < ISSUE_CODES.length; i++) if (Math.floor(bits / 2 ** i) % 2 === 1) counts[i]! += n;
    if (Number(g.flagged) === 1) {
      flaggedCalls += n;
      flaggedUserMinutes += Number(g.user_minutes ?? 0);
    }
  }
  return { issueCounts: ISSUE_CODES.map((issue, i) => ({ issue, calls: counts[i]! })), flaggedCalls, flaggedUserMinutes };
}
