import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { collect, runCli, spawnCli } from '../helpers/cli.js';
import { integrityProblems } from '../helpers/db-dump.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

/** Rows stored so far, read through a separate read-only connection (WAL lets it read mid-write). */
function storedCalls(path: string): number {
  if (!existsSync(path)) return 0;
  try {
    const db = new SqliteDatabase(path, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('select count(*) as n from calls').get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0; // schema not created yet
  }
}

describe('a sync killed with SIGKILL resumes to the ground truth', () => {
  const CALLS = 1200;
  // Latency stretches the run so the kill points land mid-sync; always-fetch makes every call a Get.
  test.override({ simApps: [{ calls: CALLS }], simFaults: { latencyMs: 2 } });

  // Kill after these many calls are stored (0: as soon as the process has started).
  for (const killAt of [0, 150, 500, 900]) {
    it(`killed after ${killAt} stored calls`, async ({ sim, database: db, writeConfig }) => {
      const cfg = writeConfig({ detailFetch: 'always', concurrency: 4 }, `kill-${killAt}.json`);
      const child = spawnCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
      const done = collect(child);
      const deadline = Date.now() + 30_000;
      while (storedCalls(db) < killAt && Date.now() < deadline && child.exitCode === null) await delay(5);
      child.kill('SIGKILL');
      const killed = await done;
      expect(killed.signal === 'SIGKILL' || killed.code === 0).toBe(true);

      const rerun = await runCli(['sync', '--config', cfg], { [KEY_ENV]: TEST_KEY });
      expect(rerun.stderr).toBe('');
      expect(rerun.code).toBe(0);
      await withStore(db, async (s) => {
        expect(await integrityProblems(s.db)).toEqual([]);
        expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]);
        // The killed run stays 'running' in the history; the re-run completed.
        const runs = await s.db.selectFrom('sync_runs').select(['status']).orderBy('id').execute();
        expect(runs.at(-1)?.status).toBe('ok');
      });
    });
  }
});
