import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Reads the job engine's own tables (pg-boss, in its schema on the same PostgreSQL database) for
 * `status` and `runs`. pg-boss 10 answers "the job with this id" (getJobById) but has no call that
 * lists a queue's jobs by key; its job table is documented (docs/sql.md of pg-boss) and read here
 * only, never written: every change goes through the engine's API.
 */

/** One app's newest job in the sync queue, as the engine holds it. */
export interface AppJobRow {
  id: string;
  app_id: string;
  region: string;
  tick: string | null;
  state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  retry_count: number;
  retry_limit: number;
  start_after: Date;
  started_on: Date | null;
  created_on: Date;
  completed_on: Date | null;
  output: unknown;
}

/** Whether the engine's schema exists in this database (a database no worker has started on has none). */
export async function engineInstalled(db: Kysely<Database>, schema: string): Promise<boolean> {
  const r = await sql<{ t: string | null }>`select to_regclass(${`${schema}.job`})::text as t`.execute(db);
  return r.rows[0]?.t != null;
}

/**
 * The newest job of each app and region in `queue` (live jobs, then those the engine archived), or
 * of the apps given. Jobs carry `{ appId, region, tick }` as data (engine-jobs.ts sends them so).
 */
export async function latestAppJobs(db: Kysely<Database>, where: { schema: string; queue: string; app?: { appId: string; region: string } }): Promise<AppJobRow[]> {
  if (!(await engineInstalled(db, where.schema))) return [];
  const appFilter = where.app ? sql`and data->>'appId' = ${where.app.appId} and data->>'region' = ${where.app.region}` : sql``;
  const r = await sql<AppJobRow>`
    select distinct on (app_id, region) * from (${jobsOf(where.schema, where.queue, appFilter)}) j
    order by app_id, region, created_on desc`.execute(db);
  return r.rows;
}

/** The newest job of `queue`, whatever its data: the schedule's last tick. */
export async function latestJob(db: Kysely<Database>, where: { schema: string; queue: string }): Promise<AppJobRow | undefined> {
  if (!(await engineInstalled(db, where.schema))) return undefined;
  const r = await sql<AppJobRow>`select * from (${jobsOf(where.schema, where.queue)}) j order by created_on desc limit 1`.execute(db);
  return r.rows[0];
}

/** The jobs of `queue` the engine holds, live and archived, as AppJobRow columns. */
function jobsOf(schema: string, queue: string, filter = sql``) {
  const cols = sql`id::text as id, data->>'appId' as app_id, data->>'region' as region, data->>'tick' as tick, state::text as state,
    retry_count, retry_limit, start_after, started_on, created_on, completed_on, output`;
  return sql`
      select ${cols} from ${sql.table(`${schema}.job`)} where name = ${queue} ${filter}
      union all
      select ${cols} from ${sql.table(`${schema}.archive`)} where name = ${queue} ${filter}`;
}
