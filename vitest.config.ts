import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/: the CLI subprocesses run the built bin, as users do (test/helpers/cli.ts).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each start their own simulator on port 0 and their own SQLite file,
    // so files can run in parallel; 2 workers match this 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
  },
});
