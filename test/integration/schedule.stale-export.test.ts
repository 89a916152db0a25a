import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Simulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/connection.js';
import { systemClock, type Clock } from '../../src/config/clock.js';
import { runScheduledTick } from '../../src/schedule/scheduled-tick.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig } from '../helpers/harness.js';

/** app2's key variable holds a key the service refuses: its sync fails, app1's succeeds. */
const WRONG_KEY_ENV = 'CALLSYNC_TEST_WRONG_KEY';
const ENV = { [KEY_ENV]: TEST_KEY, [WRONG_KEY_ENV]: 'wrong-key-0123456789abcdef' };

interface CsvRow {
  app_id: string;
  row_kind: string;
  stale: string;
  calls: string;
}

function config(sim: Simulator, db: string, exportDir: string, exportDayOfMonth: number): Record<string, unknown> {
  const c = testConfig(sim, ['app1', 'app2'], db, { schedule: { exportDayOfMonth, exportDir, exportFormat: 'csv', reconcile: false, timezone: 'UTC' } }) as { apps: Record<string, unknown>[] };
  c.apps[1]!.apiKeyEnv = WRONG_KEY_ENV;
  return c;
}

function expectOnlyApp2Stale(rows: CsvRow[]): void {
  expect(rows.filter((r) => r.app_id === 'app2').length).toBeGreaterThan(0);
  expect(rows.filter((r) => r.app_id === 'app2').every((r) => r.stale === '1')).toBe(true);
  expect(rows.filter((r) => r.app_id === 'app1').every((r) => r.stale === '0')).toBe(true);
}

describe('a scheduled billing export when one app failed to sync', () => {
  let sim: Simulator;
  const tmp = tempDir('callsync-stale-');
  beforeAll(async () => {
    sim = await startTestSim([{ calls: 60 }, { calls: 60 }]);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('the tick marks that app stale on its rows and names it in its result; the other app is not stale', async () => {
    const db = join(tmp.dir, 'tick.db');
    const dir = join(tmp.dir, 'tick-exports');
    const settings = resolveConfig(config(sim, db, dir, 1), { CALLSYNC_RETRY_BASE_MS: '5', ...ENV });
    // The tick of the 1st of next month (02:00 UTC): it exports this month, whatever today's date.
    const today = new Date();
    const tickAt = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1, 2);
    const startedAt = Date.now();
    const clock: Clock = { ...systemClock, now: () => tickAt + (Date.now() - startedAt) };
    const store = await openStore(db);
    const dispatcher = new Agent({ keepAliveTimeout: 5_000 });
    try {
      const result = await runScheduledTick({ db: store.db, dispatcher, clock, log: silentLogger }, settings);
      if (result.skipped) throw new Error(result.reason);
      expect(result.summary.results.map((r) => [r.appId, r.status])).toEqual(expect.arrayContaining([['app1', 'ok'], ['app2', 'failed']]));
      expect(result.staleApps?.map((a) => a.app_id)).toEqual(['app2']);
      expect(result.staleApps?.[0]?.reason).toMatch(/last sync .*: failed/);
      const rows = parse(readFileSync(result.exportPath!, 'utf8'), { columns: true }) as CsvRow[];
      expectOnlyApp2Stale(rows);
      // app2 has no calls stored, yet its total row is there (zeros), marked: not mistaken for an app without calls.
      expect(rows.filter((r) => r.app_id === 'app2')).toEqual([expect.objectContaining({ row_kind: 'total', calls: '0', stale: '1' })]);
    } finally {
      await dispatcher.close();
      await store.close();
    }
  }, 60_000);

  // `schedule` writes the export on schedule.exportDayOfMonth (1–28) only, by the real clock.
  const day = new Date().getUTCDate();
  it.skipIf(day > 28)('`schedule --run-now` names the stale app in its summary, and the manual export carries the same mark', async () => {
    const db = join(tmp.dir, 'cli.db');
    const dir = join(tmp.dir, 'cli-exports');
    const cfg = join(tmp.dir, 'cli.json');
    writeFileSync(cfg, JSON.stringify(config(sim, db, dir, day)));
    const tick = await runCli(['schedule', '--config', cfg, '--run-now', '--quiet'], ENV);
    expect(tick.code, tick.stderr).toBe(1);
    expect(tick.stderr).toMatch(/^billing export written: .*billing-\d{4}-\d{2}\.csv; STALE \(rows marked stale=1\): app2 \(us\): its last sync .*: failed$/m);
    expect(tick.stderr).not.toMatch(/STALE.*app1/);

    const month = /billing-(\d{4}-\d{2})\.csv/.exec(tick.stderr)![1]!;
    const manual = await runCli(['export', 'billing', '--month', month, '--config', cfg], ENV);
    expect(manual.code, manual.stderr).toBe(0);
    expect(manual.stderr).toMatch(/^callsync: warning: app2 \(us\) is stale, its rows are marked stale=1: its last sync .*: failed$/m);
    expect(manual.stderr).not.toMatch(/app1 \(us\) is stale/);
    expectOnlyApp2Stale(parse(manual.stdout, { columns: true }) as CsvRow[]);
    expect(manual.stdout).toBe(readFileSync(join(dir, `billing-${month}.csv`), 'utf8'));
  }, 60_000);
});
