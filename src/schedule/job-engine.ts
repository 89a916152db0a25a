import { createHash } from 'node:crypto';
import PgBoss from 'pg-boss';
import type { Settings } from '../config/load.js';
import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { withAdvisoryLockWait } from '../store/app-lock.js';
import type { Database } from '../store/schema.js';
import { connectionString, type PostgresAuth } from '../store/destinations/postgres-connection.js';
import { nextSlot } from './cron-timer.js';

/**
 * The job engine of several workers on one PostgreSQL database: pg-boss 10 (the newest major that
 * runs on Node 20). It was chosen over graphile-worker 0.16 because a job's expiry is ours to set
 * (graphile-worker takes a dead worker's job back only after a fixed 4 hours) and because its cron
 * sends each slot once per cluster whatever the number of workers. Its tables live in their own
 * schema, so a pg-boss of another application in the same database is not touched.
 */

/** The engine's schema in the callsync database. */
export const ENGINE_SCHEMA = 'callsync_jobs';

/** The queues: a tick fans out to one sync job per app; a finish job follows the tick's apps. */
export const QUEUES = {
  tick: 'callsync-tick',
  app: 'callsync-app-sync',
  finish: 'callsync-tick-finish',
} as const;

export interface TickJobData {
  /** Who asked for the tick: 'cron' (the schedule) or 'run-now'. */
  source: 'cron' | 'run-now';
  /** The cron slot (ISO), for 'cron'. */
  slot?: string;
}

export interface AppJobData {
  tick: string;
  appId: string;
  region: string;
}

export interface FinishJobData {
  tick: string;
  /** Unix seconds the tick started. */
  tickAt: number;
  jobs: { appId: string; region: string; jobId: string; fromTick: string }[];
}

/** The engine's job states a job can still leave. */
export const UNFINISHED_STATES: ReadonlySet<string> = new Set(['created', 'retry', 'active']);

/**
 * A UUID derived from its parts: a job re-sent with the same parts (a tick job retried after its
 * worker died) is the same job, which the engine inserts once.
 */
export function stableJobId(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Expiry of the tick and finish jobs: their handlers take seconds (queueing, then reconcile and
 * export), so a worker that dies inside one must not hold up the tick for long; never longer than an
 * app's own expiry.
 */
export function controlJobExpirySeconds(schedule: Settings['schedule']): number {
  return Math.min(schedule.jobExpirySeconds, 600);
}

/** How often the finish job looks again at a tick's apps, in seconds. */
export function finishPollSeconds(schedule: Settings['schedule']): number {
  return Math.max(1, Math.ceil(schedule.pollIntervalSeconds * 5));
}

/**
 * A started engine on the configured database. `cron` off (`--run-now`) leaves the schedule's slots
 * to the long-running workers. The engine's own errors (a lost connection while polling) are
 * logged; it retries them by itself.
 */
export async function startEngine(db: Kysely<Database>, settings: Settings, auth: PostgresAuth, log: Logger, opts: { cron: boolean }): Promise<PgBoss> {
  const s = settings.schedule;
  const boss = new PgBoss({
    connectionString: connectionString(settings.database, auth),
    schema: ENGINE_SCHEMA,
    application_name: 'callsync-worker',
    // The engine's pool: its polling, its maintenance, and our sends and reads of job states.
    max: 4,
    // Not the engine's cron: it looks back from each check with cron-parser's prev(), which finds no
    // 02:30 on the spring-forward night and two in autumn (probe78 F2). The workers send the slots
    // themselves (engine-worker.ts), one job per slot by its id.
    schedule: false,
    supervise: true,
    maintenanceIntervalSeconds: s.expiryCheckSeconds,
  });
  boss.on('error', (err: Error) => log.warn({ err: err.message }, 'job engine: error (it retries by itself)'));
  try {
    // Workers starting together would install the engine and create the queues' partitions at
    // once, which PostgreSQL may answer with a deadlock: one worker at a time, only what is missing.
    await withAdvisoryLockWait(db, 'callsync:engine-setup', async () => {
      await boss.start();
      for (const [name, options] of QUEUE_OPTIONS) if (!(await boss.getQueue(name))) await boss.createQueue(name, { name, ...options });
    });
    // The engine's schedule of an earlier version would send ticks besides the workers' own.
    if (opts.cron) await boss.unschedule(QUEUES.tick);
  } catch (err) {
    // A started engine keeps timers running: stop it, or the process would never exit.
    await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
    throw err;
  }
  return boss;
}

const QUEUE_OPTIONS: readonly [string, Omit<PgBoss.Queue, 'name'>][] = [
  [QUEUES.tick, { retryLimit: 2, retryDelay: 30 }],
  [QUEUES.app, {}],
  [QUEUES.finish, {}],
];

/** How a tick job is sent (by the cron or by --run-now): retried twice, expired like the finish job. */
export function tickJobOptions(schedule: Settings['schedule']): PgBoss.SendOptions {
  return { retryLimit: 2, retryDelay: 30, expireInSeconds: controlJobExpirySeconds(schedule) };
}

/** When the schedule next ticks (cron-timer.ts), in the schedule's time zone. */
export function nextTick(s: Settings['schedule'], from = new Date()): Date {
  return nextSlot(s, from.getTime());
}

/** The tick job of a cron slot: its id is the slot's, so each slot is one job however many workers send it. */
export function cronTickOptions(schedule: Settings['schedule'], slot: Date): PgBoss.SendOptions {
  return { ...tickJobOptions(schedule), id: stableJobId('cron', slot.toISOString()) };
}

/** Options of one app's sync job: retried with backoff within the night, expired when its worker died. */
export function appJobOptions(schedule: Settings['schedule'], id: string, appId: string, region: string): PgBoss.SendOptions {
  return {
    id,
    singletonKey: `${appId}/${region}`,
    retryLimit: schedule.retryLimit,
    retryDelay: schedule.retryDelaySeconds,
    retryBackoff: schedule.retryBackoff,
    expireInSeconds: schedule.jobExpirySeconds,
  };
}
