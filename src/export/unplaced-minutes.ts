import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { Database } from '../store/schema.js';
import { roundMinutes } from './billing.js';
import type { Period } from './period.js';

/**
 * The query a reader runs to see them, as the note prints it: exactly the calls the note counts (it
 * listed every period's, and calls marked not found, which the note leaves out).
 */
export function unplacedQuery(period: Period): string {
  return `select app_id, session_id, initiated_at, ended_at, participant_total_minutes from calls where started_at is null and not_found_at is null and participant_total_minutes > 0 and coalesce(initiated_at, ended_at) >= ${period.start} and coalesce(initiated_at, ended_at) < ${period.end}`;
}
/** The same for calls without any time at all. */
export const TIMELESS_QUERY = 'select app_id, session_id, participant_total_minutes from calls where started_at is null and initiated_at is null and ended_at is null and not_found_at is null and participant_total_minutes > 0';

/**
 * Calls with participant minutes but no start time, initiated (else ended) within the period: a
 * call belongs to the period of its start, so these are in no period's figures. Such a call is a
 * contradiction the service may still send (a call that never started has no minutes); left
 * unsaid, its minutes were missing from every export and report, exit 0 (probe round 16 a, F1).
 * One line per app and region for stderr and the report, none when there are none.
 */
export async function unplacedMinutesNotes(db: Kysely<Database>, period: Period, appIds: readonly string[] = []): Promise<string[]> {
  const inPeriod = await minutesByApp(db, appIds, (eb) => eb.and([eb(eb.fn.coalesce('initiated_at', 'ended_at'), '>=', period.start), eb(eb.fn.coalesce('initiated_at', 'ended_at'), '<', period.end)]));
  const notes = inPeriod.map(
    (r) =>
      `app ${r.app_id} (${r.region}): ${r.calls} call(s) initiated in ${period.label} hold ${roundMinutes(r.minutes)} user-minutes but no start time, so no period's figures include them; list them with callsync query "${unplacedQuery(period)}"`,
  );
  // Calls with participant minutes and no time at all (no start, initiation or end): no period can
  // claim them, so every export and report says they exist. Left to the note above, which places a
  // call by its initiation, they were in no period and in no note, exit 0 (found probing in session 20).
  const timeless = await minutesByApp(db, appIds, (eb) => eb.and([eb('initiated_at', 'is', null), eb('ended_at', 'is', null)]));
  return [
    ...notes,
    ...timeless.map(
      (r) =>
        `app ${r.app_id} (${r.region}): ${r.calls} call(s) hold ${roundMinutes(r.minutes)} user-minutes but no time at all (no start, initiation or end), so no period's figures include them; list them with callsync query "${TIMELESS_QUERY}"`,
    ),
  ];
}

/** Per app and region, the calls (not marked not found) with participant minutes and no start time that `where` also selects. */
async function minutesByApp(
  db: Kysely<Database>,
  appIds: readonly string[],
  where: (eb: ExpressionBuilder<Database, 'calls'>) => Expression<SqlBool>,
): Promise<{ app_id: string; region: string; calls: number; minutes: number }[]> {
  let q = db
    .selectFrom('calls')
    .select((eb) => ['app_id', 'region', eb.fn.countAll<number | string>().as('calls'), eb.fn.sum<number | string>('participant_total_minutes').as('minutes')])
    .where('started_at', 'is', null)
    .where('not_found_at', 'is', null)
    .where('participant_total_minutes', '>', 0)
    .where(where)
    .groupBy(['app_id', 'region'])
    .orderBy('app_id')
    .orderBy('region');
  if (appIds.length) q = q.where('app_id', 'in', [...appIds]);
  return (await q.execute()).map((r) => ({ app_id: r.app_id, region: r.region, calls: Number(r.calls), minutes: Number(r.minutes) }));
}
