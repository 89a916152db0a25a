import { sanitizeForTerminal } from '../output.js';
import { EXIT } from '../exit-codes.js';
import type { Settings } from '../../config/load.js';
import type { PostgresAuth } from '../../store/destinations/postgres-connection.js';
import type { TickOutcome } from '../../schedule/engine-jobs.js';
import type { TickFollowUp } from '../../schedule/scheduled-tick.js';
import { runTickNow, startEngineWorker } from '../../schedule/engine-worker.js';
import { nextTick } from '../../schedule/job-engine.js';
import type { AppRetryEvent } from '../../sync/sync-app.js';
import type { Runtime } from '../runtime.js';

/** What a tick's follow-up prints: the reconciliation summary, and the export with its stale apps and the minutes it holds in no figure. */
export function printFollowUp(f: TickFollowUp, quiet: boolean): void {
  if (f.reconciliation && !quiet) {
    const parts = f.reconciliation.summary.map((s) => `${s.app_id} ${s.relation} ${s.calls}`);
    console.log(sanitizeForTerminal(`reconciliation: ${parts.join(', ') || 'no calls'}; ${f.reconciliation.mismatchCount} mismatch(es)`, { singleLine: true }));
  }
  for (const e of f.exports ?? []) {
    const stale = e.staleApps;
    // A month caught up after its export day passed without a tick is said even with --quiet: finance expected it then.
    const written = `billing export written: ${e.path}${e.late ? ` (late: no tick wrote ${e.month} on its export day)` : ''}`;
    // Stale apps are said even with --quiet: a finance file with incomplete figures is a failure to see.
    if (stale.length) console.error(sanitizeForTerminal(`${written}; STALE (rows marked stale=1): ${stale.map((a) => `${a.app_id} (${a.region}): ${a.reason}`).join('; ')}`, { singleLine: true }));
    else if (e.late) console.error(sanitizeForTerminal(written, { singleLine: true }));
    else if (!quiet) console.log(written);
    // Minutes in no period's figures, said as `export billing` says them: even with --quiet, as stale apps.
    for (const note of e.unplaced) console.error(sanitizeForTerminal(`billing export ${e.path}: ${note}`, { singleLine: true }));
  }
}

/** The lines a finished tick prints (engine workers): failures and stale apps even with --quiet. */
export function printTickOutcome(o: TickOutcome, quiet: boolean): number {
  for (const a of o.apps) {
    const ok = a.state === 'completed';
    const line = ok
      ? `${a.appId} (${a.region}): ok (attempt ${a.attempts})`
      : `${a.appId} (${a.region}): ${a.state} after ${a.attempts} attempt(s)${a.error ? `: ${a.error}` : ''}`;
    if (!quiet || !ok) (ok ? console.log : console.error)(sanitizeForTerminal(line, { singleLine: true }));
  }
  printFollowUp(o, quiet);
  if (o.followUpError) console.error(sanitizeForTerminal(`callsync: the tick's follow-up failed (reconciliation / billing export not done): ${o.followUpError}`, { singleLine: true }));
  return o.apps.every((a) => a.state === 'completed') && !o.followUpError ? EXIT.OK : EXIT.SYNC_FAILED;
}

/**
 * `callsync schedule` on PostgreSQL: a worker of the job engine until SIGTERM, or with --run-now
 * one tick queued now and worked (with whatever other workers run) until it is finished.
 */
export async function runEngineWorker(
  rt: Runtime,
  settings: Settings,
  opts: { auth: PostgresAuth; runNow: boolean; quiet: boolean; stop: { signal: AbortSignal; dispose(): void }; onRetry?: (e: AppRetryEvent) => void },
): Promise<void> {
  const deps = { db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log };
  const worker = await startEngineWorker(deps, settings, {
    auth: opts.auth,
    signal: opts.stop.signal,
    cron: !opts.runNow,
    ...(opts.onRetry ? { onRetry: opts.onRetry } : {}),
    // A long-running worker prints the ticks it finished itself; --run-now prints its own tick below.
    ...(opts.runNow ? {} : { onTickDone: (o: TickOutcome) => void printTickOutcome(o, opts.quiet) }),
  });
  const close = async (): Promise<void> => {
    await worker.stop();
    opts.stop.dispose();
    await rt.close();
    // Everything is closed: the process ends by itself once the sockets' shutdowns are through. Should a
    // handle outlive that (seen once under a benchmark's load), a worker must still exit for its supervisor.
    setTimeout(() => {
      console.error('callsync: exiting with network handles still open after the shutdown');
      process.exit(process.exitCode ?? EXIT.OK);
    }, 10_000).unref();
  };
  if (opts.runNow) {
    try {
      const outcome = await runTickNow(worker, settings, opts.stop.signal);
      if (outcome) process.exitCode = printTickOutcome(outcome, opts.quiet);
      else {
        console.error(opts.stop.signal.aborted ? 'callsync: stopped before the tick finished; the other workers carry on with it' : 'callsync: the tick could not be queued or finished (see the log)');
        process.exitCode = opts.stop.signal.aborted ? EXIT.INTERRUPTED : EXIT.SYNC_FAILED;
      }
    } finally {
      await close();
    }
    return;
  }
  // The next tick as pg-boss will send it (probe round 22: the SQLite scheduler said when, this did not).
  console.log(`callsync schedule: worker on the job engine (${settings.schedule.workerConcurrency} apps at a time); ticks on ${settings.schedule.cron} (${settings.schedule.timezone}), next at ${nextTick(settings.schedule).toISOString()}; SIGTERM stops it`);
  await new Promise<void>((resolve) => opts.stop.signal.addEventListener('abort', () => resolve(), { once: true }));
  await close();
  process.exitCode = EXIT.OK;
}
