import { sql, type Kysely } from 'kysely';
import { lastRuns } from '../store/runs-repo.js';
import type { Database } from '../store/schema.js';
import { isoUtc, type Period } from './period.js';

/** Decimal places of every minutes figure in exports: stable text, far below a billed second. */
export const MINUTE_DECIMALS = 4;

/** What a billing row is: an app's total, or one call type of it. */
export type BillingRowKind = 'total' | 'type';

/**
 * One row per app, region, period and call type, plus each app's total (`row_kind` 'total', `type`
 * 'all'); '(none)' is the calls stored without a type. `type` is the service's text, so a call type
 * named 'all' is possible: only `row_kind` tells a total from a type. Counts (`calls`, `final_calls`, `calls_*`) cover every call; the minute
 * figures cover the calls that are not `flagged` (implausible minutes: negative, beyond the wall
 * clock, over 24 h), whose user-minutes are in `flagged_user_minutes` instead. So no total is
 * inflated by a figure no call can have, and nothing is dropped unseen.
 */
export interface BillingRow {
  period: string;
  period_start: string;
  period_end: string;
  timezone: string;
  app_id: string;
  region: string;
  type: string;
  calls: number;
  final_calls: number;
  participant_audio_minutes: number;
  participant_video_minutes: number;
  user_minutes: number;
  call_audio_minutes: number;
  call_video_minutes: number;
  call_total_minutes: number;
  recording_minutes: number;
  calls_participant_sum: number;
  calls_wall_clock: number;
  calls_mismatch: number;
  calls_incomplete: number;
  /** user_minutes − call_total_minutes: what participant billing adds over call-level totals. */
  delta_minutes: number;
  usage_audio_minutes: number | null;
  usage_video_minutes: number | null;
  usage_recorded_minutes: number | null;
  /** participant minutes − service-reported minutes (null without --with-usage). */
  usage_audio_delta_minutes: number | null;
  usage_video_delta_minutes: number | null;
  /** Calls with implausible minutes, counted apart (also in `calls`). */
  flagged_calls: number;
  /** Their user-minutes, not in `user_minutes` nor in any other minutes column. */
  flagged_user_minutes: number;
  /** 'total' for the app's total row, 'type' for a call type's; after every older column. */
  row_kind: BillingRowKind;
  /** 1 when the app's data may be incomplete for the period (see staleApps), else 0; null when not checked. */
  stale: number | null;
}

/** Column order of the CSV header (documented in docs/schema.md). */
export const BILLING_COLUMNS: readonly (keyof BillingRow)[] = [
  'period', 'period_start', 'period_end', 'timezone', 'app_id', 'region', 'type', 'calls', 'final_calls',
  'participant_audio_minutes', 'participant_video_minutes', 'user_minutes', 'call_audio_minutes', 'call_video_minutes',
  'call_total_minutes', 'recording_minutes', 'calls_participant_sum', 'calls_wall_clock', 'calls_mismatch',
  'calls_incomplete', 'delta_minutes', 'usage_audio_minutes', 'usage_video_minutes', 'usage_recorded_minutes',
  'usage_audio_delta_minutes', 'usage_video_delta_minutes', 'flagged_calls', 'flagged_user_minutes', 'row_kind', 'stale',
];

/** What the aggregate query returns: a billing row before the period labels and derived columns. */
type AggRow = Omit<BillingRow, 'period' | 'period_start' | 'period_end' | 'timezone' | 'delta_minutes' | `usage_${string}` | 'row_kind' | 'stale'>;

/** An aggregate row and whether it is a total (computed here) or a type row (from the query). */
interface KindedAgg {
  agg: AggRow;
  kind: BillingRowKind;
}

export function roundMinutes(n: number): number {
  const r = Number(n.toFixed(MINUTE_DECIMALS));
  return Object.is(r, -0) ? 0 : r;
}

/** An app whose figures for a period may be incomplete, and why. */
export interface StaleApp {
  app_id: string;
  region: string;
  reason: string;
}

/**
 * A period not yet ended is complete up to now at best; an app whose last successful sync is older
 * than this left out the calls since, and its month-to-date export read stale=0 however old the
 * sync was (three weeks without a successful run: three weeks of calls missing, nothing said). A
 * nightly schedule's success is at most a day old; 36 hours lets a slow night pass and marks a
 * missed one by the next evening.
 */
export const OPEN_PERIOD_MAX_SYNC_AGE_HOURS = 36;

/**
 * The apps whose stored data may not hold the whole period, so an export must not pass for complete:
 * the last sync run is not `ok` (failed, partial, interrupted, abandoned, or still running), the app
 * never synced, for a period that has ended, its last successful sync is older than the period's
 * end, and for one under way, its last successful sync is more than OPEN_PERIOD_MAX_SYNC_AGE_HOURS
 * old. The apps are those found in the database plus `apps` (the configured ones, which may never
 * have run), narrowed to `appIds` when given.
 */
export async function staleApps(
  db: Kysely<Database>,
  period: Period,
  opts: { appIds?: readonly string[]; apps?: readonly { appId: string; region: string }[]; nowSec?: number } = {},
): Promise<StaleApp[]> {
  const nowMs = opts.nowSec !== undefined ? opts.nowSec * 1000 : Date.now();
  const nowSec = Math.floor(nowMs / 1000);
  const states = await db.selectFrom('sync_state').select(['app_id', 'region', 'last_success_at']).execute();
  // The scheduler passes its clock's time: liveness of the last runs is judged at that same instant.
  const runs = await lastRuns(db, nowMs);
  const keys = new Map<string, { app_id: string; region: string }>();
  for (const k of [...states, ...runs, ...(opts.apps ?? []).map((a) => ({ app_id: a.appId, region: a.region }))]) keys.set(JSON.stringify([k.app_id, k.region]), { app_id: k.app_id, region: k.region });
  const out: StaleApp[] = [];
  for (const { app_id, region } of keys.values()) {
    if (opts.appIds?.length && !opts.appIds.includes(app_id)) continue;
    const run = runs.find((r) => r.app_id === app_id && r.region === region);
    const success = states.find((s) => s.app_id === app_id && s.region === region)?.last_success_at ?? null;
    let reason: string | undefined;
    if (!run && success === null) reason = 'never synced';
    else if (run && run.status !== 'ok') reason = `its last sync (started ${isoUtc(run.started_at)}): ${run.status}`;
    else if (success === null) reason = 'never synced successfully';
    else if (period.end <= nowSec && success < period.end) reason = `its last successful sync (${isoUtc(success)}) is older than the period's end (${isoUtc(period.end)})`;
    else if (period.end > nowSec && period.start < nowSec && success < nowSec - OPEN_PERIOD_MAX_SYNC_AGE_HOURS * 3600) {
      reason = `its last successful sync (${isoUtc(success)}) is more than ${OPEN_PERIOD_MAX_SYNC_AGE_HOURS} hours old: the period's calls since are not in the database`;
    }
    if (reason) out.push({ app_id, region, reason });
  }
  return out.sort((a, b) => cmp(a.app_id, b.app_id) || cmp(a.region, b.region));
}

/**
 * Billing figures of a period, set-based in SQL over `call_reconciliation` (a call belongs to the
 * period of its started_at). Rows come sorted by app, region, type, with each app's total row last.
 * Flagged calls count in `calls` but their minutes only in `flagged_user_minutes` (see BillingRow).
 * With `stale` (from staleApps), every row says whether its app is stale, and a stale app without
 * calls in the period still gets its total row (zeros, stale 1): an app missing from the export
 * could otherwise pass for an app without calls.
 */
export async function computeBilling(db: Kysely<Database>, period: Period, opts: { appIds?: readonly string[]; stale?: readonly StaleApp[] } = {}): Promise<BillingRow[]> {
  const apps = opts.appIds?.length ? sql`and app_id in (${sql.join(opts.appIds.map((a) => sql`${a}`))})` : sql``;
  const groups = (
    await sql<RelationGroup>`
      select app_id, region, type, relation, flagged,
             count(*) as calls,
             sum(is_final) as final_calls,
             sum(participant_audio_minutes) as participant_audio_minutes,
             sum(participant_video_minutes) as participant_video_minutes,
             sum(participant_total_minutes) as user_minutes,
             sum(call_audio_minutes) as call_audio_minutes,
             sum(call_video_minutes) as call_video_minutes,
             sum(call_total_minutes) as call_total_minutes,
             sum(recording_minutes) as recording_minutes
      from call_figure_rows
      where started_at >= ${period.start} and started_at < ${period.end} ${apps}
      group by app_id, region, type, relation, flagged`.execute(db)
  ).rows;
  const byType = foldGroups(groups);
  const totals = appTotals(byType);
  const isStale = (r: { app_id: string; region: string }): boolean => opts.stale?.some((x) => x.app_id === r.app_id && x.region === r.region) ?? false;
  for (const x of opts.stale ?? []) if (!totals.some((t) => t.app_id === x.app_id && t.region === x.region)) totals.push(emptyAgg(x.app_id, x.region));
  const kinded: KindedAgg[] = [...byType.map((agg) => ({ agg, kind: 'type' as const })), ...totals.map((agg) => ({ agg, kind: 'total' as const }))];
  const rows = kinded.map((k) => ({ ...toBillingRow(k.agg, k.kind, period), stale: opts.stale ? (isStale(k.agg) ? 1 : 0) : null }));
  // By kind before type: a call type the service names 'all' sorts among the types, not as the total.
  return rows.sort(billingOrder);
}

const kindOrder = (r: BillingRow): number => (r.row_kind === 'total' ? 1 : 0);

/** The export's row order: by app and region, each app's type rows before its total row. */
const billingOrder = (x: BillingRow, y: BillingRow): number => cmp(x.app_id, y.app_id) || cmp(x.region, y.region) || kindOrder(x) - kindOrder(y) || cmp(x.type, y.type);

/** A group of a period's calls of one app, region, type, relation and flag, as the query sums it. */
interface RelationGroup {
  app_id: string;
  region: string;
  type: string;
  relation: string;
  flagged: number | string;
  calls: number | string;
  final_calls: number | string | null;
  participant_audio_minutes: number | null;
  participant_video_minutes: number | null;
  user_minutes: number | null;
  call_audio_minutes: number | null;
  call_video_minutes: number | null;
  call_total_minutes: number | null;
  recording_minutes: number | null;
}

/** The minute columns a flagged call leaves out (its user-minutes go to flagged_user_minutes). */
const UNFLAGGED_MINUTES = [
  'participant_audio_minutes', 'participant_video_minutes', 'user_minutes', 'call_audio_minutes', 'call_video_minutes', 'call_total_minutes', 'recording_minutes',
] as const satisfies readonly (keyof AggRow & keyof RelationGroup)[];

const RELATION_COUNTS: Record<string, 'calls_participant_sum' | 'calls_wall_clock' | 'calls_mismatch' | 'calls_incomplete'> = {
  participant_sum: 'calls_participant_sum',
  wall_clock: 'calls_wall_clock',
  mismatch: 'calls_mismatch',
  incomplete: 'calls_incomplete',
};

/** One row per app, region and type from its groups by relation and flag, in the order first seen. */
function foldGroups(groups: readonly RelationGroup[]): AggRow[] {
  const rows = new Map<string, AggRow>();
  for (const g of groups) {
    const key = JSON.stringify([g.app_id, g.region, g.type]);
    let r = rows.get(key);
    if (!r) rows.set(key, (r = emptyAgg(g.app_id, g.region, g.type)));
    const n = Number(g.calls);
    r.calls += n;
    r.final_calls += Number(g.final_calls ?? 0);
    const relation = RELATION_COUNTS[g.relation];
    if (relation) r[relation] += n;
    if (Number(g.flagged) === 1) {
      r.flagged_calls += n;
      r.flagged_user_minutes += Number(g.user_minutes ?? 0);
    } else {
      for (const k of UNFLAGGED_MINUTES) r[k] += Number(g[k] ?? 0);
    }
  }
  return [...rows.values()];
}

/** Each app's total row (type 'all'): the column sums of its rows by type. */
function appTotals(byType: readonly AggRow[]): AggRow[] {
  const totals = new Map<string, AggRow>();
  for (const r of byType) {
    const key = JSON.stringify([r.app_id, r.region]);
    const t = totals.get(key);
    if (!t) {
      totals.set(key, { ...r, type: 'all' });
      continue;
    }
    for (const k of SUMMED) t[k] = Number(t[k] ?? 0) + Number(r[k] ?? 0);
  }
  return [...totals.values()];
}

/** A row with nothing in it: a stale app's total row without calls in the period, or a type row to fold groups into. */
function emptyAgg(app_id: string, region: string, type = 'all'): AggRow {
  return { app_id, region, type, ...(Object.fromEntries(SUMMED.map((k) => [k, 0])) as Record<(typeof SUMMED)[number], number>) };
}

/** The numeric columns of an aggregate row. */
const SUMMED = [
  'calls', 'final_calls', 'participant_audio_minutes', 'participant_video_minutes', 'user_minutes', 'call_audio_minutes',
  'call_video_minutes', 'call_total_minutes', 'recording_minutes', 'calls_participant_sum', 'calls_wall_clock',
  'calls_mismatch', 'calls_incomplete', 'flagged_calls', 'flagged_user_minutes',
] as const satisfies readonly (keyof AggRow)[];
// Fails to compile when AggRow gains a column that is neither a label nor summed above.
const summedCoversAggRow: Exclude<keyof AggRow, 'app_id' | 'region' | 'type' | (typeof SUMMED)[number]> extends never ? true : never = true;
void summedCoversAggRow;

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function toBillingRow(a: AggRow, kind: BillingRowKind, period: Period): BillingRow {
  const n = (v: number | null | undefined): number => Number(v ?? 0);
  return {
    period: period.label,
    period_start: isoUtc(period.start),
    period_end: isoUtc(period.end),
    timezone: period.timezone,
    app_id: a.app_id,
    region: a.region,
    type: a.type,
    calls: n(a.calls),
    final_calls: n(a.final_calls),
    participant_audio_minutes: n(a.participant_audio_minutes),
    participant_video_minutes: n(a.participant_video_minutes),
    user_minutes: n(a.user_minutes),
    call_audio_minutes: n(a.call_audio_minutes),
    call_video_minutes: n(a.call_video_minutes),
    call_total_minutes: n(a.call_total_minutes),
    recording_minutes: n(a.recording_minutes),
    calls_participant_sum: n(a.calls_participant_sum),
    calls_wall_clock: n(a.calls_wall_clock),
    calls_mismatch: n(a.calls_mismatch),
    calls_incomplete: n(a.calls_incomplete),
    delta_minutes: n(a.user_minutes) - n(a.call_total_minutes),
    usage_audio_minutes: null,
    usage_video_minutes: null,
    usage_recorded_minutes: null,
    usage_audio_delta_minutes: null,
    usage_video_delta_minutes: null,
    flagged_calls: n(a.flagged_calls),
    flagged_user_minutes: n(a.flagged_user_minutes),
    row_kind: kind,
    stale: null,
  };
}

/**
 * The service's own minutes of an app for a period, as withUsage reads them. Stated here, by the
 * stage that prints them, so that export takes no type from the stages that fetch them (sync's
 * fetch-usage hands over a Map of source/chat-api.ts's UsageFigures, which has this shape; the CLI,
 * which passes one to the other, is where the compiler holds the two together).
 */
export interface ServiceUsage {
  /** null: the service's answer did not state it; its column and delta stay empty. */
  audioMinutes: number | null;
  videoMinutes: number | null;
  recordedMinutes: number | null;
}

/**
 * Adds service-reported usage to each app's total row (the service reports per app, not per type).
 * An app the service reports usage for and that has no row in the period (no calls stored in it)
 * gets a total row of its own with zeros: dropped, the service's minutes against none of ours were
 * in no row, and that gap is what the comparison is for.
 */
export function withUsage(rows: readonly BillingRow[], usage: ReadonlyMap<string, ServiceUsage>, period: Period): BillingRow[] {
  const out: BillingRow[] = [...rows];
  for (const key of usage.keys()) {
    const [appId = '', region = ''] = key.split('/');
    if (!rows.some((r) => r.row_kind === 'total' && r.app_id === appId && r.region === region)) {
      // Not stale: computeBilling gives every stale app a total row already.
      out.push({ ...toBillingRow(emptyAgg(appId, region), 'total', period), stale: 0 });
    }
  }
  const delta = (ours: number, theirs: number | null): number | null => (theirs === null ? null : ours - theirs);
  return out
    .map((r) => {
      const u = r.row_kind === 'total' ? usage.get(`${r.app_id}/${r.region}`) : undefined;
      if (!u) return r;
      return {
        ...r,
        usage_audio_minutes: u.audioMinutes,
        usage_video_minutes: u.videoMinutes,
        usage_recorded_minutes: u.recordedMinutes,
        usage_audio_delta_minutes: delta(r.participant_audio_minutes, u.audioMinutes),
        usage_video_delta_minutes: delta(r.participant_video_minutes, u.videoMinutes),
      };
    })
    .sort(billingOrder);
}

/**
 * One line per app the export has calls of in the period that `asked` (the apps whose Usage Metrics
 * are fetched: the configured ones, narrowed by --app) does not hold. Such an app's usage columns
 * stayed empty beside its minutes, exit 0, nothing said, among apps whose columns were filled, so it
 * read as compared (probe68 F3); the caller treats each line as a usage that could not be fetched.
 */
export function usageNotAsked(rows: readonly BillingRow[], asked: readonly { appId: string; region: string }[]): string[] {
  return rows
    .filter((r) => r.row_kind === 'total' && r.calls > 0 && !asked.some((a) => a.appId === r.app_id && a.region === r.region))
    .map((r) => `app ${r.app_id} (${r.region}): ${r.calls} call(s) in ${r.period}, but the app is not in the config in that region, so its usage cannot be fetched; add it, or pass --app for the others`);
}

/**
 * Apps whose service usage is zero while the database holds their minutes for the period. An echo
 * of the numbers sent cannot show that the service read them in another unit (a range in 1970 has
 * no usage): this is the one sign of it, so it is said rather than left to a reader of the deltas.
 */
export function zeroUsageNotes(rows: readonly BillingRow[]): string[] {
  return rows
    // One of the two left out (a warning of its own) and the other 0 reads the same way.
    .filter((r) => r.row_kind === 'total' && (r.usage_audio_minutes ?? 0) === 0 && (r.usage_video_minutes ?? 0) === 0 && (r.usage_audio_minutes !== null || r.usage_video_minutes !== null) && r.participant_audio_minutes + r.participant_video_minutes > 0)
    .map((r) => `app ${r.app_id} (${r.region}): the service reports 0 minutes for ${r.period} while the database holds ${roundMinutes(r.participant_audio_minutes + r.participant_video_minutes)} participant minutes; if the service read the range in another unit, check usageTimestampUnit`);
}

// The per-call lines (--detail) live in billing-detail.ts; exported here too, where callers found them.
export { BILLING_DETAIL_COLUMNS, computeBillingDetail, type BillingDetailRow } from './billing-detail.js';
