import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type PgBoss from 'pg-boss';
import type { Settings } from '../config/load.js';
import type { PostgresAuth } from '../store/destinations/postgres-connection.js';
import { errorMessage } from '../store/destinations/contract.js';
import type { AppRetryEvent, SyncDeps } from '../sync/sync-app.js';
import { onAppJob, onFinishJob, onTickJob, type EngineDeps, type TickOutcome } from './engine-jobs.js';
import { startCronTimer } from './cron-timer.js';
import { cronTickOptions, QUEUES, stableJobId, startEngine, tickJobOptions, type AppJobData, type FinishJobData, type TickJobData } from './job-engine.js';

/**
 * A `callsync schedule` worker on PostgreSQL: it takes tick, app and finish jobs from the engine
 * until stopped. Each worker keeps the schedule's clock too and sends each slot (cron-timer.ts); the
 * engine inserts one tick job per slot, by its id.
 */
export interface EngineWorker {
  boss: PgBoss;
  /** Stops taking jobs; running syncs stop at their next page (`signal`) and are retried by another worker. */
  stop(): Promise<void>;
}

export interface WorkerOptions {
  auth: PostgresAuth;
  signal: AbortSignal;
  /** false for `--run-now`: the long-running workers keep the schedule. */
  cron: boolean;
  onRetry?: (e: AppRetryEvent) => void;
  /** Each finished tick (whichever worker finished it), for the worker's own output. */
  onTickDone?: (outcome: TickOutcome) => void;
}

export async function startEngineWorker(deps: SyncDeps, settings: Settings, opts: WorkerOptions): Promise<EngineWorker> {
  const boss = await startEngine(deps.db, settings, opts.auth, deps.log, { cron: opts.cron });
  setMaxListeners(0, opts.signal);
  const d: EngineDeps = { ...deps, boss, settings, signal: opts.signal, ...(opts.onRetry ? { onRetry: opts.onRetry } : {}) };
  const polling = { pollingIntervalSeconds: settings.schedule.pollIntervalSeconds, batchSize: 1 };
  await boss.work<TickJobData>(QUEUES.tick, polling, async ([job]) => {
    try {
      return await onTickJob(d, job!.id);
    } catch (err) {
      // The engine keeps a handler's error in the job and says nothing: a tick that cannot queue its
      // apps skipped the night without a word (probe67 F5).
      d.log.error({ tick: job!.id, err: errorMessage(err) }, 'tick failed: its apps were not queued (the engine retries it, then gives up on this slot)');
      throw err;
    }
  });
  await boss.work<FinishJobData>(QUEUES.finish, polling, async ([job]) => {
    const outcome = await onFinishJob(d, job!.data);
    opts.onTickDone?.(outcome);
    return outcome;
  });
  // One engine worker per app slot: pg-boss 10 runs one job at a time per worker.
  for (let i = 0; i < settings.schedule.workerConcurrency; i++) {
    await boss.work<AppJobData>(QUEUES.app, polling, async ([job]) => onAppJob(d, job!));
  }
  // Every worker keeps the schedule's clock and sends each slot's tick job; its id is the slot's, so
  // the engine inserts one per slot however many workers send it (a late worker, back from sleep,
  // sends the slot it missed, once).
  const cron = opts.cron
    ? startCronTimer(settings.schedule, deps.clock, (slot) => {
        const at = slot.at.toISOString();
        if (slot.lateMs >= 60_000) deps.log.warn({ slot: at, missed: slot.missed }, `the tick of ${at} is sent late: this worker's machine slept or its process was stopped`);
        boss.send(QUEUES.tick, { source: 'cron', slot: at } satisfies TickJobData, cronTickOptions(settings.schedule, slot.at)).catch((err: unknown) => {
          deps.log.error({ slot: at, err: errorMessage(err) }, 'tick not sent: the job engine refused it (another worker may have sent it)');
        });
      })
    : undefined;
  return {
    boss,
    async stop() {
      cron?.stop();
      // Running app jobs see the signal (already aborted by the caller) and end; the engine marks
      // what is still active as failed, to be retried by another worker.
      await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
    },
  };
}

/**
 * `callsync schedule --run-now` on PostgreSQL: queue one tick now and work with the other workers
 * until its finish job has run; the tick's outcome is the finish job's output.
 */
export async function runTickNow(worker: EngineWorker, settings: Settings, signal: AbortSignal): Promise<TickOutcome | undefined> {
  const tick = await worker.boss.send(QUEUES.tick, { source: 'run-now' } satisfies TickJobData, tickJobOptions(settings.schedule));
  if (!tick) return undefined;
  const finishId = stableJobId(tick, 'finish');
  const pollMs = settings.schedule.pollIntervalSeconds * 1000;
  while (!signal.aborted) {
    const job = await worker.boss.getJobById<FinishJobData>(QUEUES.finish, finishId, { includeArchive: true });
    if (job?.state === 'completed') return job.output as TickOutcome;
    if (job?.state === 'failed' || job?.state === 'cancelled') return undefined;
    // A tick job out of retries sends no finish job: stop waiting for one.
    const tickJob = job ? undefined : await worker.boss.getJobById(QUEUES.tick, tick, { includeArchive: true });
    if (tickJob?.state === 'failed' || tickJob?.state === 'cancelled') return undefined;
    await sleep(pollMs, undefined, { signal }).catch(() => undefined);
  }
  return undefined;
}
