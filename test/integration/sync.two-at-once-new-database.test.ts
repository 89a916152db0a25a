import { describe, expect } from 'vitest';
import { collect, spawnCli } from '../helpers/cli.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY } from '../helpers/harness.js';

/**
 * Two syncs started together on a database not created yet: both migrate it first. The one SQLite
 * refused at once ("database is locked": a read turning into a write is not covered by the busy
 * timeout) exited 2 with that line, about every other time, instead of learning from the sync
 * lease that another sync runs (probe round 16 c, F3).
 */
describe('two syncs started at once on a new SQLite database', () => {
  test.override({ dialect: 'sqlite', simApps: [{ calls: 200 }] });

  it('one syncs; the other skips (exit 4) or finds the work done (exit 0), never a migration error', async ({ writeConfig, newDatabase }) => {
    const env = { [KEY_ENV]: TEST_KEY };
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      const cfg = writeConfig({ database: await newDatabase(`together-${round}`) }, `together-${round}.json`);
      const runs = await Promise.all([0, 1].map(() => collect(spawnCli(['sync', '--config', cfg], env))));
      for (const r of runs) {
        expect(r.stderr).not.toMatch(/migration .* failed/);
        expect([0, 4], r.stderr).toContain(r.code);
      }
      expect(runs.map((r) => r.code)).toContain(0);
      outcomes.push(runs.map((r) => r.code).sort().join('+'));
    }
    expect(outcomes.length).toBe(6);
  }, 120_000);
});
