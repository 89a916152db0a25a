import type { Kysely } from 'kysely';
import type { Period } from '../export/period.js';
import type { Database } from '../store/schema.js';

const day = (sec: number): string => new Date(sec * 1000).toISOString().slice(0, 10);

/**
 * The stderr line for a report or export of a period without a single call, or undefined when it
 * has some: an empty file alone reads as "nothing happened", while the usual cause is a period the
 * database does not cover (a typo, or a sync that has not run). Names the days it does cover.
 */
export async function emptyPeriodNote(db: Kysely<Database>, period: Period, appIds: readonly string[]): Promise<string | undefined> {
  const apps = (q: ReturnType<typeof base>) => (appIds.length ? q.where('app_id', 'in', [...appIds]) : q);
  const base = () => db.selectFrom('calls').where('started_at', 'is not', null);
  const inPeriod = await apps(base()).where('started_at', '>=', period.start).where('started_at', '<', period.end).select('session_id').limit(1).execute();
  if (inPeriod.length) return undefined;
  const span = await apps(base())
    .select((eb) => [eb.fn.min<number | null>('started_at').as('first'), eb.fn.max<number | null>('started_at').as('last')])
    .executeTakeFirst();
  const whom = appIds.length ? `app ${appIds.join(', ')}` : 'any app';
  const holds = span?.first != null && span.last != null ? `the database holds calls from ${day(Number(span.first))} to ${day(Number(span.last))}` : 'the database holds no calls for it; run `callsync sync` first';
  return `callsync: no calls in ${period.label} (${period.timezone}) for ${whom}; ${holds}`;
}
