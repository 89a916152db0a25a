import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test as base } from 'vitest';
import type { FaultProfile, SimAppSpec, Simulator } from '../../src/simulator/index.js';
import { databaseFactory, type TestDialect } from './databases.js';
import { simAppIds, startTestSim, tempDir, testConfig } from './harness.js';

/**
 * The set-up every integration test needs (issue 15, item 7), as Vitest fixtures instead of a
 * beforeAll/afterAll pair copied into each file. A test names what it uses in its first argument,
 * `it('…', async ({ sim, database }) => …)`, and gets its own, made for it alone: Vitest sets up only
 * the fixtures a test names (a test that does not name `sim` starts no simulator), and runs each
 * `onCleanup` after the test whether it passed or failed, so no simulator, PostgreSQL database or
 * temporary folder outlives a failing test.
 *
 * What a describe changes, it overrides once inside it:
 *
 *   describe.each(await testDialects())('… [%s]', (dialect) => {
 *     test.override({ dialect, simApps: [{ calls: 1500 }], simFaults: { notFoundCalls: 3 } });
 *     it('…', async ({ sim, database }) => { … });
 *   });
 *
 * A test that needs a simulator of its own (other faults than its neighbours, or two simulators)
 * calls `startSim(apps, faults)`; one that needs a second database calls `newDatabase(name)`. Both
 * are closed or dropped with the rest.
 */
export const test = base
  // Options: plain values a describe replaces with test.override. The dialect is chosen by the
  // describe (from testDialects(), which fails loudly in CI when PostgreSQL is down), never here.
  .extend('dialect', 'sqlite' as TestDialect)
  .extend('simApps', [{}] as Partial<SimAppSpec>[])
  .extend('simFaults', {} as FaultProfile)

  /** A fresh temporary folder: SQLite files, config files and exports of this test; removed after it. */
  .extend('dir', async ({}, { onCleanup }) => {
    const tmp = tempDir();
    onCleanup(tmp.cleanup);
    return tmp.dir;
  })

  /** Starts a simulator closed after the test: for tests whose simulator differs from the describe's. */
  .extend('startSim', async ({}, { onCleanup }) => {
    const started: Simulator[] = [];
    onCleanup(async () => {
      await Promise.all(started.splice(0).map((s) => s.close()));
    });
    return async (apps: Partial<SimAppSpec>[], faults: FaultProfile = {}): Promise<Simulator> => {
      const sim = await startTestSim(apps, faults);
      started.push(sim);
      return sim;
    };
  })

  /** The describe's simulator (simApps, simFaults) over real HTTP on a free port. */
  .extend('sim', async ({ simApps, simFaults, startSim }) => startSim(simApps, simFaults))

  /**
   * Makes another fresh database on the test's dialect and returns what `database` in a config takes:
   * a file `<name>.db` in `dir`, or a new PostgreSQL database dropped (with force) after the test.
   */
  .extend('newDatabase', async ({ dialect, dir }, { onCleanup }) => {
    const dbs = databaseFactory(dialect, dir);
    onCleanup(() => dbs.dropAll());
    return (name: string): Promise<string> => dbs.fresh(name);
  })

  /** The test's database, fresh and empty (no tables yet: the first sync migrates it). */
  .extend('database', async ({ newDatabase }) => newDatabase('callsync'))

  /**
   * Writes a config for the describe's simulator apps and the test's database (testConfig: short
   * retries, every app on `sim`) into `dir`, and returns its path: what `--config` takes.
   */
  .extend('writeConfig', async ({ sim, simApps, database, dir }) => {
    return (extra: Record<string, unknown> = {}, name = 'callsync.json', appIds = simAppIds(simApps)): string => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(testConfig(sim, appIds, database, extra)));
      return path;
    };
  });

export const it = test;
