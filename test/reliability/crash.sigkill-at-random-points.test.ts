import { afterAll, describe, expect } from 'vitest';
import { it, test } from '../helpers/fixture.js';
import { crashAndRecover, type CrashOutcome } from './support/crash.js';

/**
 * `callsync sync` SIGKILLed at pseudo-random points (a delay after spawning, or a number of stored
 * calls, drawn from each seed; a quarter of the seeds kill the re-run too), then run to completion:
 * the database must equal the ground truth every time. Seeds are fixed, so a failure replays;
 * `npm run soak` runs many more. The pattern of test/integration/sync.resumes-after-sigkill.test.ts,
 * with random kill points, malformed and vanished calls in the data, and more checks.
 */
const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);
const CALLS = 400;
const SEEDS_AT_ONCE = 2;

describe('sync SIGKILLed at random points resumes to the ground truth', () => {
  const outcomes: CrashOutcome[] = [];
  // Latency stretches a run over about a second, so kill points land all through it.
  test.override({ simApps: [{ calls: CALLS }], simFaults: { latencyMs: 2, notFoundCalls: 3, malformedCalls: 3 } });
  afterAll(async () => {
    console.log(
      ['| seed | kills (mode@point → calls stored at the kill, how it ended) | problems |', '|---|---|---|']
        .concat(outcomes.map((o) => `| ${o.seed} | ${o.kills.map((k) => `${k.mode}@${k.at} → ${k.storedAtKill} (${k.ended})`).join('; ')} | ${o.problems.length} |`))
        .join('\n'),
    );
  });

  it(`${SEEDS.length} seeds: kill, re-run, compare with the truth, integrity and foreign keys`, { timeout: 300_000 }, async ({ sim, dir }) => {
    // Two seeds at a time (each its own database and config; the simulator serves both): a seed
    // spends most of its time waiting for its kill point and its processes, and 20 in a row took
    // over two minutes of the suite.
    for (let i = 0; i < SEEDS.length; i += SEEDS_AT_ONCE) {
      const round = await Promise.all(SEEDS.slice(i, i + SEEDS_AT_ONCE).map((seed) => crashAndRecover(sim, dir, seed, { calls: CALLS })));
      outcomes.push(...round);
      for (const outcome of round) expect(outcome.problems, `seed ${outcome.seed}: ${JSON.stringify(outcome.kills)}`).toEqual([]);
    }
    // The kill points really spread over the run: some before anything was stored, some mid-way.
    const stored = outcomes.flatMap((o) => o.kills.map((k) => k.storedAtKill));
    expect(stored.some((n) => n === 0)).toBe(true);
    expect(stored.some((n) => n > 0 && n < CALLS)).toBe(true);
  });
});
