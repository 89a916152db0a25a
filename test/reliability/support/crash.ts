import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import type { Simulator } from '../../../src/simulator/index.js';
import { collect, runCli, spawnCli } from '../../helpers/cli.js';
import { integrityProblems } from '../../helpers/db-dump.js';
import { KEY_ENV, TEST_KEY, testConfig, withStore } from '../../helpers/harness.js';
import { diffAgainstTruth } from '../../helpers/truth-diff.js';
import { onlyUnreadCallsError } from '../../helpers/unread-line.js';
import { seededRandom } from './prng.js';

/** Calls stored so far, read through a separate read-only connection (WAL lets it read mid-write). */
export function storedCalls(path: string): number {
  if (!existsSync(path)) return 0;
  try {
    const db = new SqliteDatabase(path, { readonly: true, fileMustExist: true, timeout: 50 });
    try {
      return (db.prepare('select count(*) as n from calls').get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0; // schema not created yet, or the file is being created
  }
}

export interface Kill {
  /** `delay`: SIGKILL this many ms after spawning; `stored`: once this many calls are stored. */
  mode: 'delay' | 'stored';
  at: number;
  /** Calls stored when the signal was sent. */
  storedAtKill: number;
  /** How the killed process ended (a run may finish before its kill point). */
  ended: string;
}

export interface CrashOutcome {
  seed: number;
  kills: Kill[];
  /** Everything wrong after the final run; empty when the database equals the ground truth. */
  problems: string[];
}

export interface CrashOptions {
  /** Calls of the simulated app (for choosing `stored` kill points). */
  calls: number;
  /** Upper end of `delay` kill points, ms after spawning (tsx startup takes most of a second). */
  maxDelayMs?: number;
  /** Chance that a seed kills twice (the re-run is killed too) before the final run. */
  doubleKillRate?: number;
}

/**
 * One crash-recovery round: `callsync sync` as a subprocess, SIGKILLed at a point drawn from `seed`
 * (a delay, or a number of stored calls), once or twice; then a run to completion. Returns what
 * differs from the ground truth: the database must equal it, pass integrity and foreign-key checks,
 * hold each malformed record once, keep no run 'running', and hold no lease.
 */
export async function crashAndRecover(sim: Simulator, dir: string, seed: number, opts: CrashOptions): Promise<CrashOutcome> {
  const random = seededRandom(seed);
  const db = join(dir, `crash-${seed}.db`);
  const cfg = join(dir, `crash-${seed}.json`);
  writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db, { detailFetch: 'always', concurrency: 4, pageSize: 25 })));
  const env = { [KEY_ENV]: TEST_KEY };
  const kills: Kill[] = [];
  const problems: string[] = [];
  const rounds = random() < (opts.doubleKillRate ?? 0.25) ? 2 : 1;
  // Calls the simulator serves unreadably (malformedCalls) make every run that completes partial,
  // exit 1, saying so: never ok with them missing.
  const unreadable = sim.truth('app1').malformed.size > 0;
  const completeExit = unreadable ? 1 : 0;
  const completeStatus = unreadable ? 'partial' : 'ok';

  for (let k = 0; k < rounds; k++) {
    const mode = random() < 0.5 ? 'delay' : 'stored';
    // Delays from 100 ms: a CLI that starts fast (it stores its first calls ~0.5 s in) is still
    // killed before it stored anything on some seeds; from 400 ms no seed did, once startup got faster.
    const at = mode === 'delay' ? Math.round(100 + random() * ((opts.maxDelayMs ?? 2_500) - 100)) : 1 + Math.floor(random() * opts.calls);
    const child = spawnCli(['sync', '--config', cfg, '--quiet'], env);
    const done = collect(child);
    const started = Date.now();
    const deadline = started + 30_000;
    if (mode === 'delay') {
      while (Date.now() - started < at && child.exitCode === null) await delay(5);
    } else {
      while (storedCalls(db) < at && Date.now() < deadline && child.exitCode === null) await delay(5);
    }
    const storedAtKill = storedCalls(db);
    child.kill('SIGKILL');
    const res = await done;
    kills.push({ mode, at, storedAtKill, ended: res.signal ?? `exit ${res.code}` });
    if (res.signal !== 'SIGKILL' && res.code !== completeExit) problems.push(`killed run ${k + 1} ended with exit ${res.code}: ${res.stderr.slice(0, 500)}`);
  }

  const final = await runCli(['sync', '--config', cfg, '--quiet'], env);
  if (final.code !== completeExit) problems.push(`final run exit ${final.code}: ${(final.stderr || final.stdout).slice(0, 800)}`);
  await withStore(db, async (s) => {
    const truth = sim.truth('app1');
    problems.push(...(await integrityProblems(s.db)));
    problems.push(...(await diffAgainstTruth(s.db, truth)));
    const runs = await s.db.selectFrom('sync_runs').select(['status', 'error']).orderBy('id').execute();
    if (runs.at(-1)?.status !== completeStatus) problems.push(`last run is ${runs.at(-1)?.status ?? 'missing'}`);
    const why = runs.at(-1)?.error ?? '';
    if (unreadable && !onlyUnreadCallsError().test(why)) problems.push(`last run's error: ${why}`);
    const bad = runs.slice(0, -1).filter((r) => r.status !== 'abandoned' && r.status !== completeStatus);
    if (bad.length) problems.push(`earlier runs left as ${bad.map((r) => r.status).join(', ')}`);
    const rejected = await s.db.selectFrom('rejected_records').select('record_key').execute();
    const keys = rejected.map((r) => r.record_key).sort();
    const want = [...truth.malformed].sort();
    if (JSON.stringify(keys) !== JSON.stringify(want)) problems.push(`rejected_records ${JSON.stringify(keys)}, want each malformed call once: ${JSON.stringify(want)}`);
    const leases = await s.db.selectFrom('leases').selectAll().execute();
    if (leases.length) problems.push(`a lease is still held: ${JSON.stringify(leases)}`);
    const state = await s.db.selectFrom('sync_state').select('watermark_started_at').execute();
    const newest = Math.max(...[...truth.calls.values()].map((c) => c.startedAt ?? 0));
    if (state[0]?.watermark_started_at !== newest) problems.push(`watermark ${state[0]?.watermark_started_at}, newest call started ${newest}`);
  });
  return { seed, kills, problems };
}
