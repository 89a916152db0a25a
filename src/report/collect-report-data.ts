import { sql, type Kysely, type RawBuilder } from 'kysely';
import { ConfigError } from '../config/errors.js';
import { computeBilling, staleApps } from '../export/billing.js';
import { unplacedMinutesNotes } from '../export/unplaced-minutes.js';
import type { Period } from '../export/period.js';
import { NO_TYPE } from '../reconcile/issue-codes.js';
import { displayDatabase } from '../store/destinations/index.js';
import type { Database } from '../store/schema.js';
import { periodDays, type PeriodDay } from './period-days.js';
import {
  RELATIONS,
  type DailyTypeMinutes,
  type DailyUsage,
  type MismatchRow,
  type RelationCount,
  type ReportApp,
  type ReportData,
  type TopGroupRow,
  type TopUserRow,
} from './report-data.js';

/** How many rows the ranked tables show: a page a reader finishes, not a dump (the CSV export is that). */
export const TOP_MISMATCHES = 20;
export const TOP_USERS = 10;
export const TOP_GROUPS = 10;

export interface CollectOptions {
  /** Only these apps; all apps in the database when empty or absent. */
  appIds?: readonly string[];
  /** Shown in the header; not opened here. */
  databasePath: string;
  /** The configured apps: one never synced is named as stale, not left out. */
  configuredApps?: readonly { appId: string; region: string }[];
}

/**
 * Reads every figure of the report for one period (a call belongs to the period of its
 * started_at, as in the billing export). Read-only; every ranking has a full tie-break, so the
 * same database always gives the same data. Throws ConfigError when an --app is not in the
 * database or the period is longer than the report allows.
 */
export async function collectReportData(db: Kysely<Database>, period: Period, opts: CollectOptions): Promise<ReportData> {
  const appIds = opts.appIds?.length ? [...new Set(opts.appIds)].sort() : undefined;
  const days = periodDays(period);
  // The page travels by e-mail: a PostgreSQL URL is shown without its password, however it came in.
  const databasePath = displayDatabase(opts.databasePath);
  await assertReportingSchema(db, databasePath);
  const apps = await selectApps(db, appIds);
  // As the billing export judges them: the page is read as complete unless it says otherwise
  // (it said nothing after a failed sync, probe round 16 a, F4).
  const stale = await staleApps(db, period, { ...(appIds ? { appIds } : {}), ...(opts.configuredApps ? { apps: opts.configuredApps } : {}) });
  const [billing, daily, relations, mismatches, topUsers, topGroups, unplaced] = await Promise.all([
    computeBilling(db, period, { ...(appIds ? { appIds } : {}), stale }),
    selectDailyUsage(db, period, days, appIds),
    selectRelations(db, period, appIds),
    selectMismatches(db, period, appIds),
    selectTopUsers(db, period, appIds),
    selectTopGroups(db, period, appIds),
    unplacedMinutesNotes(db, period, appIds),
  ]);
  const notices = [...stale.map((a) => `app ${a.app_id} (${a.region}): its figures may be incomplete, ${a.reason}`), ...unplaced];
  return { period, databasePath, apps, notices, billing, daily, relations, mismatches, topUsers, topGroups };
}

/** The views the report reads (migration 20261122T010000_reporting). */
const REPORTING_VIEWS = ['call_reconciliation', 'daily_usage', 'group_call_attendance'] as const;

/** An old or empty database should get a one-line "what to do", not an SQL error. */
async function assertReportingSchema(db: Kysely<Database>, path: string): Promise<void> {
  const names = new Set((await db.introspection.getTables()).map((t) => t.name));
  const missing = REPORTING_VIEWS.filter((v) => !names.has(v));
  if (missing.length) {
    throw new ConfigError(`database ${path} has no ${missing.join(', ')}; run \`callsync migrate\` (or \`callsync sync\`) on it first`);
  }
}

function appFilter(column: string, appIds: readonly string[] | undefined): RawBuilder<unknown> {
  return appIds ? sql`and ${sql.ref(column)} in (${sql.join(appIds.map((a) => sql`${a}`))})` : sql``;
}

async function selectApps(db: Kysely<Database>, appIds: readonly string[] | undefined): Promise<ReportApp[]> {
  const rows = await db
    .selectFrom('calls as c')
    .leftJoin('sync_state as s', (j) => j.onRef('s.app_id', '=', 'c.app_id').onRef('s.region', '=', 'c.region'))
    .select(['c.app_id', 'c.region', 's.last_success_at'])
    .distinct()
    .orderBy('c.app_id')
    .orderBy('c.region')
    .execute();
  const known = [...new Set(rows.map((r) => r.app_id))];
  const missing = (appIds ?? []).filter((a) => !known.includes(a));
  if (missing.length) {
    throw new ConfigError(`--app ${missing.join(', ')}: no calls of ${missing.length > 1 ? 'these apps' : 'this app'} in the database; apps in it: ${known.join(', ') || '(none: run callsync sync first)'}`);
  }
  return rows
    .filter((r) => !appIds || appIds.includes(r.app_id))
    .map((r) => ({ appId: r.app_id, region: r.region, lastSuccessAt: r.last_success_at }));
}

interface DailyRow {
  day: string;
  type: string | null;
  calls: number;
  user_minutes: number | null;
}

/**
 * Daily user-minutes by type. In UTC the calls' own UTC day (`started_day`, indexed, the `daily_usage`
 * view's `day`) is the right day; in any other time zone a UTC date would put evening calls on the
 * wrong day, so calls are bucketed by the period's local day bounds instead (a VALUES list of at most
 * MAX_REPORT_DAYS rows, joined on started_at).
 *
 * As in the billing totals, a flagged call's minutes (implausible: negative, beyond the wall clock,
 * over 24 h; `call_figure_rows.flagged`) are left out, its call still counted: summed in, one call
 * stated with 50,000 minutes made a day's bar 50,000 minutes high beside a billed total without
 * them, nothing said (probe64 F2). So the chart adds up to the billed user-minutes, and differs from
 * `daily_usage` (which sums every stored minute) by the flagged minutes the billing section names.
 */
async function selectDailyUsage(db: Kysely<Database>, period: Period, days: readonly PeriodDay[], appIds: readonly string[] | undefined): Promise<DailyUsage> {
  const labels = days.map((d) => d.day);
  if (!days.length) return { basis: 'utc', days: [], types: [], points: [] };
  const utc = period.timezone === 'UTC';
  const result = utc
    ? await sql<DailyRow>`
        select c.started_day as day, c.type as type, count(*) as calls, ${UNFLAGGED_MINUTES} as user_minutes
        from calls c join call_figure_rows f on f.call_id = c.call_id
        where c.started_day >= ${labels[0]} and c.started_day <= ${labels[labels.length - 1]} ${appFilter('c.app_id', appIds)}
        group by c.started_day, c.type
        order by c.started_day, c.type`.execute(db)
    : await sql<DailyRow>`
        -- Bounds cast: PostgreSQL types a bound parameter in VALUES as text, and bigint >= text does
        -- not exist (every local-time report failed there, probe64 F3); SQLite takes either.
        with days(day, day_start, day_end) as (values ${sql.join(days.map((d) => sql`(${d.day}, cast(${d.start} as bigint), cast(${d.end} as bigint))`))})
        select d.day as day, c.type as type, count(*) as calls, ${UNFLAGGED_MINUTES} as user_minutes
        from days d
        join calls c on c.started_at >= d.day_start and c.started_at < d.day_end
        join call_figure_rows f on f.call_id = c.call_id
        where 1 = 1 ${appFilter('c.app_id', appIds)}
        group by d.day, c.type
        order by d.day, c.type`.execute(db);
  // A call without a type is a series of its own, named as in the billing export.
  const points: DailyTypeMinutes[] = result.rows.map((r) => ({ day: r.day, type: r.type ?? NO_TYPE, calls: Number(r.calls), userMinutes: Number(r.user_minutes ?? 0) }));
  const types = [...new Set(points.map((p) => p.type))].sort();
  return { basis: utc ? 'utc' : 'local', days: labels, types, points };
}

/** A call's user-minutes unless it is flagged (call_figure_rows `f`, calls `c`): what the billing totals sum. */
const UNFLAGGED_MINUTES = sql<number>`sum(case when f.flagged = 0 then c.participant_total_minutes else 0 end)`;

async function selectRelations(db: Kysely<Database>, period: Period, appIds: readonly string[] | undefined): Promise<RelationCount[]> {
  let q = db
    .selectFrom('call_reconciliation')
    // A flagged call counts, its minutes do not: as in the billing totals (probe64 F2).
    .select((eb) => ['relation', eb.fn.countAll<number>().as('calls'), sql<number>`sum(case when flagged = 0 then participant_total_minutes else 0 end)`.as('user_minutes')])
    .where('started_at', '>=', period.start)
    .where('started_at', '<', period.end);
  if (appIds) q = q.where('app_id', 'in', appIds);
  const rows = await q.groupBy('relation').execute();
  // Every relation is listed, a zero included: "0 mismatches" is the news a reader wants.
  return RELATIONS.map((relation) => {
    const r = rows.find((x) => x.relation === relation);
    return { relation, calls: Number(r?.calls ?? 0), userMinutes: Number(r?.user_minutes ?? 0) };
  });
}

async function selectMismatches(db: Kysely<Database>, period: Period, appIds: readonly string[] | undefined): Promise<MismatchRow[]> {
  let q = db
    .selectFrom('call_reconciliation')
    .select(['app_id', 'region', 'session_id', 'type', 'started_at', 'participant_total_minutes', 'total_duration_minutes', 'wall_clock_minutes', 'total_delta_minutes', 'issues'])
    .where('relation', '=', 'mismatch')
    .where('started_at', '>=', period.start)
    .where('started_at', '<', period.end);
  if (appIds) q = q.where('app_id', 'in', appIds);
  const rows = await q
    .orderBy(sql`abs(total_delta_minutes)`, 'desc')
    .orderBy('app_id')
    .orderBy('session_id')
    .limit(TOP_MISMATCHES)
    .execute();
  return rows.map((r) => ({
    appId: r.app_id,
    region: r.region,
    sessionId: r.session_id,
    type: r.type ?? NO_TYPE,
    startedAt: r.started_at,
    userMinutes: r.participant_total_minutes,
    callMinutes: r.total_duration_minutes,
    wallClockMinutes: r.wall_clock_minutes,
    // The view's delta is call − participants; the report, like the billing export, shows what
    // participant billing adds over the call-level figure.
    deltaMinutes: -r.total_delta_minutes,
    issues: r.issues ? r.issues.split(',') : [],
  }));
}

/**
 * Users ranked by their participant minutes in calls started in the period. Computed from
 * the participant rows rather than the `user_usage` view, whose month is a UTC month text and so
 * cannot follow --from/--to or a time zone. A flagged call's minutes are left out, as in the
 * billing totals (its call still counted): one participant stated with 50,000 minutes on a
 * five-minute call was the month's top user with them (probe64 F2).
 */
async function selectTopUsers(db: Kysely<Database>, period: Period, appIds: readonly string[] | undefined): Promise<TopUserRow[]> {
  let q = db
    .selectFrom('call_participant_rows as p')
    .innerJoin('calls as c', 'c.call_id', 'p.call_id')
    .innerJoin('call_figure_rows as f', 'f.call_id', 'c.call_id')
    .select((eb) => [
      'c.app_id',
      'p.uid',
      // call_id stands for the call's (app_id, session_id) in this database: the same count.
      eb.fn.count<number>('c.call_id').distinct().as('calls'),
      sql<number>`sum(case when f.flagged = 0 then coalesce(p.total_audio_minutes, 0) else 0 end)`.as('audio_minutes'),
      sql<number>`sum(case when f.flagged = 0 then coalesce(p.total_video_minutes, 0) else 0 end)`.as('video_minutes'),
      sql<number>`sum(case when f.flagged = 0 then coalesce(p.total_duration_minutes, 0) else 0 end)`.as('user_minutes'),
    ])
    .where('c.started_at', '>=', period.start)
    .where('c.started_at', '<', period.end);
  if (appIds) q = q.where('c.app_id', 'in', appIds);
  const rows = await q.groupBy(['c.app_id', 'p.uid']).orderBy('user_minutes', 'desc').orderBy('c.app_id').orderBy('p.uid').limit(TOP_USERS).execute();
  if (!rows.length) return [];
  // Names live on group memberships only; min() picks one deterministically if groups disagree.
  const names = await db
    .selectFrom('group_members')
    .select((eb) => ['app_id', 'uid', eb.fn.min('name').as('name')])
    .where('uid', 'in', rows.map((r) => r.uid))
    .where('name', 'is not', null)
    .groupBy(['app_id', 'uid'])
    .execute();
  return rows.map((r) => ({
    appId: r.app_id,
    uid: r.uid,
    name: names.find((n) => n.app_id === r.app_id && n.uid === r.uid)?.name ?? null,
    calls: Number(r.calls),
    audioMinutes: Number(r.audio_minutes),
    videoMinutes: Number(r.video_minutes),
    userMinutes: Number(r.user_minutes),
  }));
}

interface GroupRow {
  app_id: string;
  guid: string | null;
  calls: number;
  user_minutes: number | null;
  members: number | null;
  attendance_rate: number | null;
}

/**
 * Groups ranked by the user-minutes of their calls started in the period (a flagged call's left
 * out, as in the billing totals). Attendance comes from
 * the `group_call_attendance` view (not in the Kysely types, hence raw SQL) and is null for a
 * group whose membership was never synced.
 */
async function selectTopGroups(db: Kysely<Database>, period: Period, appIds: readonly string[] | undefined): Promise<TopGroupRow[]> {
  const result = await sql<GroupRow>`
    select c.app_id as app_id, c.receiver as guid, count(*) as calls,
           ${UNFLAGGED_MINUTES} as user_minutes,
           max(a.members_at_last_sync) as members,
           avg(a.attendance_rate) as attendance_rate
    from calls c
    join call_figure_rows f on f.call_id = c.call_id
    left join group_call_attendance a on a.app_id = c.app_id and a.session_id = c.session_id
    where c.receiver_type = 'group' and c.started_at >= ${period.start} and c.started_at < ${period.end} ${appFilter('c.app_id', appIds)}
    group by c.app_id, c.receiver
    order by user_minutes desc, c.app_id, c.receiver
    limit ${TOP_GROUPS}`.execute(db);
  return result.rows.map((r) => ({
    appId: r.app_id,
    guid: r.guid,
    calls: Number(r.calls),
    userMinutes: Number(r.user_minutes ?? 0),
    membersAtLastSync: Number(r.members ?? 0),
    attendanceRate: r.attendance_rate === null ? null : Number(r.attendance_rate),
  }));
}
