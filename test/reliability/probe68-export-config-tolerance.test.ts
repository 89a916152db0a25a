import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, TEST_KEY, testConfig, testSettings } from '../helpers/harness.js';

/**
 * probe68 F5: which relation a call follows (participant_sum, wall_clock, mismatch) depends on the
 * reconciliation tolerance. `callsync reconcile` applies the config's `reconcileToleranceMinutes` as
 * it is now (README); `export billing` and `report` used the one the last sync stored. After a
 * change of the config (0.01 → 5 minutes), the same month read 18 mismatches in reconcile and
 * 59 in the billing export's calls_mismatch and the report's "Calls to review", with the same
 * config, exit 0: two finance outputs of one period disagreeing, neither saying why. Every reader
 * now applies the configured tolerance (as reconcile does), so they agree with each other and with
 * what the next sync stores.
 */
const tmp = tempDir('probe68-tolerance-');
let sim: Simulator;
const db = () => join(tmp.dir, 'calls.db');
const cfg = () => join(tmp.dir, 'tolerance-5.json');
const ENV = { [KEY_ENV]: TEST_KEY };
beforeAll(async () => {
  sim = await startTestSim([{ appId: 'app1', calls: 3000 }]);
  expect((await syncWith(testSettings(sim, ['app1'], db()))).ok).toBe(true);
  writeFileSync(cfg(), JSON.stringify(testConfig(sim, ['app1'], db(), { reconcileToleranceMinutes: 5 })));
});
afterAll(async () => {
  await sim.close();
  tmp.cleanup();
});

interface Counts {
  participant_sum: number;
  wall_clock: number;
  mismatch: number;
  incomplete: number;
}

async function exported(month: string): Promise<Counts> {
  const res = await runCli(['export', 'billing', '--config', cfg(), '--month', month], ENV);
  expect(res.code, res.stderr).toBe(0);
  const total = (parse(res.stdout, { columns: true }) as Record<string, string>[]).find((r) => r.row_kind === 'total')!;
  return { participant_sum: Number(total.calls_participant_sum), wall_clock: Number(total.calls_wall_clock), mismatch: Number(total.calls_mismatch), incomplete: Number(total.calls_incomplete) };
}

describe('export and report apply the configured tolerance, as reconcile does', () => {
  it('after the config changed: reconcile, export billing and report agree, and equal what the next sync stores', async () => {
    const month = '2025-11';
    const rec = await runCli(['reconcile', '--config', cfg(), '--from', '2025-11-01', '--to', '2025-12-01', '--format', 'json'], ENV);
    expect(rec.code, rec.stderr).toBe(0);
    const summary = (JSON.parse(rec.stdout) as { summary: { relation: keyof Counts; calls: number }[] }).summary;
    const fromReconcile: Counts = { participant_sum: 0, wall_clock: 0, mismatch: 0, incomplete: 0 };
    for (const s of summary) fromReconcile[s.relation] += s.calls;
    const fromExport = await exported(month);
    expect(fromExport).toEqual(fromReconcile);

    const page = join(tmp.dir, 'report.html');
    const rep = await runCli(['report', '--config', cfg(), '--month', month, '--out', page], ENV);
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout).toContain(`${fromReconcile.mismatch} mismatches`);
    expect(readFileSync(page, 'utf8')).toMatch(new RegExp(`Calls to review</div><div class="value">${fromReconcile.mismatch}<`));

    // The next sync stores the configured tolerance: the figures are the same as before it.
    const synced = await runCli(['sync', '--config', cfg(), '--quiet'], ENV);
    expect(synced.code, synced.stderr).toBe(0);
    expect(await exported(month)).toEqual(fromExport);
  }, 120_000);
});
