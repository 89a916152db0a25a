import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type PgBoss from 'pg-boss';
import type { Settings } from '../config/load.js';
import { unixSeconds } from '../config/clock.js';
import { withAdvisoryLockWait } from '../store/app-lock.js';
import { latestAppJobs } from '../store/job-queue-repo.js';
import { errorMessage } from '../store/destinations/contract.js';
import { APP_BUSY, prepareDatabase, syncAppLocked } from '../sync/run-sync.js';
import type { AppRetryEvent, SyncDeps } from '../sync/sync-app.js';
import { appJobOptions, controlJobExpirySeconds, ENGINE_SCHEMA, finishPollSeconds, QUEUES, stableJobId, UNFINISHED_STATES, type AppJobData, type FinishJobData } from './job-engine.js';
import { tickFollowUp, type TickFollowUp } from './scheduled-tick.js';

/**
 * The three jobs of a tick on the engine. A tick job sends one sync job per configured app and one
 * finish job; any worker takes the app jobs (each under its app's advisory lock); the finish job
 * waits until every app job of the tick is done or out of retries, then reconciles and exports.
 */

export interface EngineDeps extends SyncDeps {
  boss: PgBoss;
  settings: Settings;
  signal: AbortSignal;
  onRetry?: (e: AppRetryEvent) => void;
}

/** What a finished tick says: per app its job's end, plus the follow-up (also the finish job's output). */
export interface TickOutcome extends TickFollowUp {
  tick: string;
  apps: { appId: string; region: string; state: string; attempts: number; error?: string }[];
  /** Why the follow-up (reconciliation, billing export) could not be done: the tick failed. */
  followUpError?: string;
}

/** Thrown by the finish job while apps of its tick are still queued, running or retrying: the engine tries it again. */
class TickNotDone extends Error {}

/**
 * A tick: one sync job per app, then the finish job. Sends are serialised across workers (an
 * advisory lock) so two ticks at once cannot both queue one app; an app whose job of an earlier
 * tick is still queued, running or retrying is not queued again: the finish job waits for that one.
 */
export async function onTickJob(d: EngineDeps, tick: string): Promise<FinishJobData> {
  await prepareDatabase(d.db, d.settings);
  const s = d.settings.schedule;
  const log = d.log.child({ tick });
  return withAdvisoryLockWait(d.db, 'callsync:enqueue', async () => {
    const jobs: FinishJobData['jobs'] = [];
    for (const app of d.settings.apps) {
      const id = stableJobId(tick, app.appId, app.region);
      const [last] = await latestAppJobs(d.db, { schema: ENGINE_SCHEMA, queue: QUEUES.app, app });
      if (last && last.id !== id && UNFINISHED_STATES.has(last.state)) {
        log.warn({ appId: app.appId, region: app.region, job: last.id, state: last.state }, 'app not queued again: its job of an earlier tick is still unfinished; this tick waits for it');
        jobs.push({ appId: app.appId, region: app.region, jobId: last.id, fromTick: last.tick ?? '' });
        continue;
      }
      await d.boss.send(QUEUES.app, { tick, appId: app.appId, region: app.region } satisfies AppJobData, appJobOptions(s, id, app.appId, app.region));
      jobs.push({ appId: app.appId, region: app.region, jobId: id, fromTick: tick });
    }
    const data: FinishJobData = { tick, tickAt: unixSeconds(d.clock), jobs };
    // Waiting is a failure the engine retries after the poll delay: a worker that dies while
    // waiting hands the wait to another after the job's short expiry.
    await d.boss.send(QUEUES.finish, data, { id: stableJobId(tick, 'finish'), retryLimit: 100_000, retryDelay: finishPollSeconds(s), retryBackoff: false, expireInSeconds: controlJobExpirySeconds(s) });
    log.info({ apps: jobs.length }, 'tick queued');
    return data;
  });
}

/**
 * One app's sync. Anything but `ok` is thrown so the engine retries it with backoff (`partial`
 * too: a run that could not prove its listing whole is worth another try within the night).
 */
export async function onAppJob(d: EngineDeps, job: { id: string; data: AppJobData; expireInSeconds: number }): Promise<Record<string, unknown>> {
  const app = d.settings.apps.find((a) => a.appId === job.data.appId && a.region === job.data.region);
  if (!app) return { skipped: 'no longer in the config' };
  const log = d.log.child({ tick: job.data.tick, job: job.id });
  // The engine gives up on an attempt at its expiry and retries it elsewhere, but cannot stop it:
  // the sync stops itself just before (at a page boundary, marked interrupted), so no attempt
  // outlives its job and the retry resumes from what was written.
  const expiry = AbortSignal.timeout(Math.max(1, job.expireInSeconds - 2) * 1000);
  const signal = AbortSignal.any([d.signal, expiry]);
  setMaxListeners(0, signal);
  const r = await syncAppLocked({ ...d, log }, d.settings, app, { runId: randomUUID(), signal, ...(d.onRetry ? { onRetry: d.onRetry } : {}) });
  if (expiry.aborted && r?.status === 'interrupted') throw new Error(`stopped at the job's expiry (schedule.jobExpirySeconds ${Number(job.expireInSeconds)} s); the next attempt resumes`);
  if (!r) throw new Error(APP_BUSY);
  if (r.status !== 'ok') throw new Error(`${r.status}${r.error ? `: ${r.error}` : ''}`);
  return { status: r.status, mode: r.mode, callsSeen: r.callsSeen, callsWritten: r.callsWritten, requests: r.requests };
}

/** The tick's end: throws TickNotDone while an app job can still change; then reconcile and export. */
export async function onFinishJob(d: EngineDeps, data: FinishJobData): Promise<TickOutcome> {
  const jobs = await Promise.all(data.jobs.map(async (j) => ({ ...j, job: await d.boss.getJobById<AppJobData>(QUEUES.app, j.jobId, { includeArchive: true }) })));
  const pending = jobs.filter((j) => j.job && UNFINISHED_STATES.has(j.job.state));
  if (pending.length) throw new TickNotDone(`waiting for ${pending.length} app(s): ${pending.map((j) => `${j.appId} (${j.region}) ${j.job!.state}`).join(', ')}`);
  const apps = jobs.map((j) => ({
    appId: j.appId,
    region: j.region,
    state: j.job?.state ?? 'missing',
    attempts: j.job ? j.job.retryCount + 1 : 0,
    ...(j.job?.state === 'failed' ? { error: errorOf(j.job.output) } : {}),
  }));
  // Only "apps still running" is waited out by the engine's retries (100,000 of them). Any other
  // failure of the follow-up (an export folder not writable or full, a failing query) was retried
  // the same way for days, with no word anywhere (probe67 F4): the tick ends here, failed, saying why.
  try {
    const follow = await tickFollowUp(d, d.settings, data.tick);
    return { tick: data.tick, apps, ...follow };
  } catch (err) {
    const followUpError = errorMessage(err);
    d.log.error({ tick: data.tick, err: followUpError }, 'tick follow-up failed: no reconciliation summary or billing export for this tick');
    return { tick: data.tick, apps, followUpError };
  }
}

/** The message pg-boss stored for a failed job (a serialised Error under `value` or at the top). */
export function errorOf(output: unknown): string {
  const o = output as { message?: unknown; value?: { message?: unknown } } | null;
  const m = o?.message ?? o?.value?.message;
  return typeof m === 'string' ? m : 'failed';
}
