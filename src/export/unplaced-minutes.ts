import { sql, type Kysely, type SqlBool } from 'kysely';
import { InternalError } from '../config/errors.js';
import type { Database } from '../store/schema.js';
import { roundMinutes } from './billing.js';
import type { Period } from './period.js';

/**
 * The calls no period's figures include, as SQL conditions on `calls`: each note counts its calls with
 * them and prints them in the query a reader runs to list those calls, so the two cannot drift apart
 * (they were written twice, a Kysely chain and a text, until session 26). Calls marked not found are
 * in: a call the service deleted keeps its row and is billed like any other (docs/schema.md,
 * `not_found_at`), so one with a start time counts in its period's figures; left out here, one
 * without vanished from every export and report with nothing said (probe73).
 */
const UNPLACED = 'started_at is null and participant_total_minutes > 0';
/** The same calls initiated (else ended) within `period`; its bounds are integers, inlined so the printed query runs as it is. */
function inPeriod(period: Period): string {
  if (!Number.isSafeInteger(period.start) || !Number.isSafeInteger(period.end)) throw new InternalError(`unplaced minutes: period bounds ${period.start}, ${period.end} are not whole seconds`);
  return `${UNPLACED} and coalesce(initiated_at, ended_at) >= ${period.start} and coalesce(initiated_at, ended_at) < ${period.end}`;
}
/** The same calls without any time at all: no period can claim them. */
const TIMELESS = `${UNPLACED} and initiated_at is null and ended_at is null`;

/** The query a reader runs to see a period's calls, as the note prints it: exactly the calls the note counts. */
export function unplacedQuery(period: Period): string {
  return `select app_id, session_id, initiated_at, ended_at, participant_total_minutes from calls where ${inPeriod(period)}`;
}
/** The same for calls without any time at all. */
export const TIMELESS_QUERY = `select app_id, session_id, participant_total_minutes from calls where ${TIMELESS}`;

/**
 * Calls with participant minutes but no start time, initiated (else ended) within the period: a
 * call belongs to the period of its start, so these are in no period's figures. Such a call is a
 * contradiction the service may still send (a call that never started has no minutes); left
 * unsaid, its minutes were missing from every export and report, exit 0 (probe round 16 a, F1).
 * One line per app and region for stderr and the report, none when there are none.
 */
export async function unplacedMinutesNotes(db: Kysely<Database>, period: Period, appIds: readonly string[] = []): Promise<string[]> {
  const notes = (await minutesByApp(db, appIds, inPeriod(period))).map(
    (r) =>
      `app ${r.app_id} (${r.region}): ${r.calls} call(s) initiated in ${period.label} hold ${roundMinutes(r.minutes)} user-minutes but no start time${gone(r.notFound)}, so no period's figures include them; list them with callsync query "${unplacedQuery(period)}"`,
  );
  // Calls with participant minutes and no time at all (no start, initiation or end): no period can
  // claim them, so every export and report says they exist. Left to the note above, which places a
  // call by its initiation, they were in no period and in no note, exit 0 (found probing in session 20).
  const timeless = await minutesByApp(db, appIds, TIMELESS);
  return [
    ...notes,
    ...timeless.map(
      (r) =>
        `app ${r.app_id} (${r.region}): ${r.calls} call(s) hold ${roundMinutes(r.minutes)} user-minutes but no time at all (no start, initiation or end)${gone(r.notFound)}, so no period's figures include them; list them with callsync query "${TIMELESS_QUERY}"`,
    ),
  ];
}

/** How many of a note's calls are marked not found, said beside its count (the reader finds them by not_found_at). */
function gone(notFound: number): string {
  return notFound > 0 ? ` (${notFound} of them marked not found: the service no longer has them; their rows are kept and billed like any call's)` : '';
}

/** Per app and region, the calls `where` (one of the conditions above) selects: how many, how many of them not found, and their participant minutes. */
async function minutesByApp(db: Kysely<Database>, appIds: readonly string[], where: string): Promise<{ app_id: string; region: string; calls: number; notFound: number; minutes: number }[]> {
  let q = db
    .selectFrom('calls')
    .select((eb) => [
      'app_id',
      'region',
      eb.fn.countAll<number | string>().as('calls'),
      eb.fn.count<number | string>('not_found_at').as('not_found'),
      eb.fn.sum<number | string>('participant_total_minutes').as('minutes'),
    ])
    .where(sql<SqlBool>`${sql.raw(where)}`)
    .groupBy(['app_id', 'region'])
    .orderBy('app_id')
    .orderBy('region');
  if (appIds.length) q = q.where('app_id', 'in', [...appIds]);
  return (await q.execute()).map((r) => ({ app_id: r.app_id, region: r.region, calls: Number(r.calls), notFound: Number(r.not_found), minutes: Number(r.minutes) }));
}
