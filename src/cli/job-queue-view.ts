import { isoUtc } from '../export/period.js';
import { ENGINE_SCHEMA, QUEUES } from '../schedule/job-engine.js';
import { errorOf } from '../schedule/engine-jobs.js';
import { destinationOf } from '../store/destinations/index.js';
import { latestAppJobs, latestJob, type AppJobRow } from '../store/job-queue-repo.js';
import { lastRuns } from '../store/runs-repo.js';
import type { Store } from '../store/connection.js';

/** An app's place in the job engine's queue, as `status` and `runs` show it. */
export interface QueueEntry {
  app_id: string;
  region: string;
  state: AppJobRow['state'];
  /** One phrase: queued / running / retrying (attempt n of m, next try at …) / failed after n attempts: … / done. */
  text: string;
  /** Unix seconds the job was queued: a failed job counts against the app until a later sync succeeds. */
  queued_at: number | null;
}

const seconds = (d: Date | null): number | null => (d === null ? null : Math.floor(d.getTime() / 1000));

/** Says where a job stands; `runner` names the process of a running job (from its sync run). */
export function describeJob(j: AppJobRow, runner?: string): string {
  const attempts = j.retry_count + 1;
  const limit = j.retry_limit + 1;
  switch (j.state) {
    case 'created':
      return `queued since ${isoUtc(seconds(j.created_on))}`;
    case 'active':
      return `running${runner ? ` (${runner})` : ''}, attempt ${attempts} of ${limit}`;
    case 'retry':
      return `retrying: attempt ${attempts} of ${limit} failed (${errorOf(j.output)}); next try at ${isoUtc(seconds(j.start_after))}`;
    case 'failed':
      return `failed after ${attempts} attempts: ${errorOf(j.output)}`;
    case 'completed':
      return `done at ${isoUtc(seconds(j.completed_on))}`;
    default:
      return j.state;
  }
}

/**
 * Each app's newest job in the engine, on a PostgreSQL database where workers ran; empty on SQLite
 * (no engine: `schedule` there is one process) and before any worker started. A running job names
 * the process of its app's running sync run.
 */
export async function queueEntries(store: Store): Promise<QueueEntry[]> {
  if (!destinationOf(store.db).capabilities.concurrentWriters) return [];
  const jobs = await latestAppJobs(store.db, { schema: ENGINE_SCHEMA, queue: QUEUES.app });
  const running = jobs.some((j) => j.state === 'active') ? (await lastRuns(store.db)).filter((r) => r.status === 'running' && r.pid !== null) : [];
  const runner = (j: AppJobRow): string | undefined => {
    const r = running.find((x) => x.app_id === j.app_id && x.region === j.region);
    return r ? `pid ${r.pid} on ${r.host ?? '?'}` : undefined;
  };
  return jobs.map((j) => ({ app_id: j.app_id, region: j.region, state: j.state, text: describeJob(j, runner(j)), queued_at: seconds(j.created_on) }));
}

/**
 * The schedule's newest tick when it failed (every attempt), as one phrase; undefined otherwise, and
 * on SQLite. A tick that fails (an unfinished copy, a failed migration, the database refusing)
 * queues no app job, so the apps' rows still read the night before: healthy (probe67 F5).
 */
export async function failedTick(store: Store): Promise<string | undefined> {
  if (!destinationOf(store.db).capabilities.concurrentWriters) return undefined;
  const tick = await latestJob(store.db, { schema: ENGINE_SCHEMA, queue: QUEUES.tick });
  if (tick?.state !== 'failed') return undefined;
  return `the schedule's last tick (queued ${isoUtc(seconds(tick.created_on))}) failed after ${tick.retry_count + 1} attempts: ${errorOf(tick.output)}; its apps were not synced`;
}
