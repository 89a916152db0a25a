/**
 * `npm run soak`: the reliability suite's random parts, for much longer than CI can afford.
 *
 *   npm run soak -- [--minutes 30] [--seeds 500] [--start 1000] [--calls 400]
 *
 * Alternates two kinds of rounds, each drawn from its seed (a failure prints the seed to replay):
 * - crash: `callsync sync` SIGKILLed at a random point (once or twice), then run to completion;
 *   the database must equal the simulator's ground truth (test/reliability/support/crash.ts);
 * - faults: a random mix of every simulator fault at random rates, two in-process runs (the second
 *   picks up calls inserted while paging); the database must equal the truth, with bounded requests.
 * Stops after --seeds rounds or --minutes, whichever comes first; exits 1 if any round failed.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FaultProfile } from '../src/simulator/index.js';
import { integrityProblems } from '../test/helpers/db-dump.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../test/helpers/harness.js';
import { diffAgainstTruth } from '../test/helpers/truth-diff.js';
import { crashAndRecover } from '../test/reliability/support/crash.js';
import { seededRandom } from '../test/reliability/support/prng.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    seeds: { type: 'string', default: '500' },
    start: { type: 'string', default: '1000' },
    calls: { type: 'string', default: '400' },
  },
});
const MINUTES = Number(values.minutes);
const SEEDS = Number(values.seeds);
const START = Number(values.start);
const CALLS = Number(values.calls);

/** A random fault profile: every fault on at a rate drawn from the seed. */
function randomFaults(seed: number): FaultProfile {
  const r = seededRandom(seed * 7919);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  return {
    http5xxRate: r() * 0.15,
    resetRate: r() * 0.1,
    truncateRate: r() * 0.1,
    http429Rate: r() * 0.01,
    retryAfter: pick(['seconds', 'http-date', 'none'] as const),
    stallRate: r() * 0.01,
    stallMs: 2_000,
    notFoundCalls: Math.floor(r() * 5),
    malformedCalls: Math.floor(r() * 5),
    ...(r() < 0.5 ? { insertWhilePaging: { afterPage: 1 + Math.floor(r() * 3), count: 1 + Math.floor(r() * 9) } } : {}),
    ...(r() < 0.5 ? { removeWhilePaging: { afterPage: 1 + Math.floor(r() * 3), count: 1 + Math.floor(r() * 5) } } : {}),
    ...(r() < 0.3 ? { emptyPageAt: 2 + Math.floor(r() * 3) } : {}),
    ...(r() < 0.3 ? { lieTotalPages: pick(['low', 'high'] as const) } : {}),
    ...(r() < 0.2 ? { omitPerPage: true } : {}),
    faultSeed: seed,
  };
}

async function faultRound(dir: string, seed: number): Promise<string[]> {
  const faults = randomFaults(seed);
  const sim = await startTestSim([{ calls: CALLS, seed }], faults);
  try {
    const before = new Set(sim.truth('app1').calls.keys());
    const r = seededRandom(seed);
    const settings = testSettings(sim, ['app1'], join(dir, `faults-${seed}.db`), {
      detailFetch: r() < 0.5 ? 'always' : 'auto', concurrency: 1 + Math.floor(r() * 8), pageSize: 20 + Math.floor(r() * 120), maxAttempts: 10, requestTimeoutMs: 1_000,
    });
    const first = (await syncWith(settings)).results[0]!;
    const second = (await syncWith(settings)).results[0]!;
    const truth = sim.truth('app1');
    const removed = new Set([...before].filter((id) => !truth.calls.has(id)));
    const problems: string[] = [];
    if (second.status !== 'ok') problems.push(`second run ${second.status}: ${second.error ?? ''}`);
    // Generous: a clean run needs about one request per call plus pages; faults add their rate's worth.
    const bound = 3 * (CALLS + 200);
    if (first.requests + second.requests > bound) problems.push(`${first.requests + second.requests} requests, more than ${bound}`);
    await withStore(settings.database, async (s) => {
      problems.push(...(await integrityProblems(s.db)), ...(await diffAgainstTruth(s.db, truth, { allowExtra: removed })));
    });
    return problems.map((p) => `${p}  (faults ${JSON.stringify(faults)})`);
  } finally {
    await sim.close();
  }
}

async function main(): Promise<void> {
  const tmp = tempDir('callsync-soak-');
  const crashSim = await startTestSim([{ calls: CALLS }], { latencyMs: 2, notFoundCalls: 3, malformedCalls: 3 });
  const deadline = Date.now() + MINUTES * 60_000;
  const failed: { seed: number; kind: string; problems: string[] }[] = [];
  let rounds = 0;
  try {
    for (let seed = START; seed < START + SEEDS && Date.now() < deadline; seed++) {
      const kind = seed % 2 === 0 ? 'crash' : 'faults';
      const started = Date.now();
      let problems: string[];
      let detail = '';
      try {
        if (kind === 'crash') {
          const o = await crashAndRecover(crashSim, tmp.dir, seed, { calls: CALLS });
          problems = o.problems;
          detail = o.kills.map((k) => `${k.mode}@${k.at}→${k.storedAtKill}`).join(', ');
        } else problems = await faultRound(tmp.dir, seed);
      } catch (err) {
        problems = [`round threw: ${(err as Error).stack ?? String(err)}`];
      }
      rounds++;
      const status = problems.length ? `FAILED (${problems.length} problems)` : 'ok';
      console.log(`seed ${seed} ${kind.padEnd(6)} ${status} ${((Date.now() - started) / 1000).toFixed(1)} s ${detail}`);
      if (problems.length) {
        failed.push({ seed, kind, problems });
        for (const p of problems.slice(0, 10)) console.log(`    ${p}`);
      }
    }
  } finally {
    await crashSim.close();
    tmp.cleanup();
  }
  console.log(`\n${rounds} rounds, ${failed.length} failed${failed.length ? `: seeds ${failed.map((f) => `${f.seed} (${f.kind})`).join(', ')}; replay with --start SEED --seeds 1` : ''}`);
  process.exitCode = failed.length ? 1 : 0;
}

await main();
