import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/: the CLI subprocesses run the built bin, as users do (test/helpers/cli.ts).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each start their own simulator on port 0 and their own SQLite file,
    // so files can run in parallel. Three on these 2-core machines: with two, the suite kept about
    // 1.3 cores busy (its files wait on subprocesses, servers and timers), 20–22 minutes in CI;
    // with three, 149 % of a core beside another workload, every test passing (2026-11-30).
    pool: 'forks',
    maxWorkers: 3,
    // Each worker keeps its imported modules from one file to the next: importing src/ through vite
    // again for each of the ~210 files was 349 s of the suite's time (27 s shared). Safe because no
    // test mocks modules or leaves globals changed (fake timers and TZ are restored, every simulator,
    // database and server is the test's own); a test that needs fresh module state needs this back
    // to true (or a vitest project of its own). Clean-clone CI 2026-11-30: vitest 973 → 811 s.
    isolate: false,
  },
});
