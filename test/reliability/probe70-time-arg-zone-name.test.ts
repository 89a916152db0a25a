import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NOW, type Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { simAppIds, startTestSim, syncWith, tempDir, testSettings } from '../helpers/harness.js';

/**
 * probe70: probe68 F1 reads an ISO time without an offset as UTC by appending `Z` to whatever
 * followed the date when it held no `Z`, `+` or `-`. A time naming its zone in words (`2025-11-20
 * 10:00 UTC`, `… GMT`), which Date.parse read before (the zone stated, so the machine's played no
 * part), became `…UTCZ`, not a date: reconcile and sync refused it, exit 2, where they had worked.
 * Only a bare time (HH:MM[:SS[.fff]]) now gets the `Z`; the other forms are read as before.
 */
const tmp = tempDir('probe70-time-arg-');
let sim: Simulator;
let db = '';
beforeAll(async () => {
  const apps = [{ calls: 300 }];
  sim = await startTestSim(apps);
  db = join(tmp.dir, 'calls.db');
  expect((await syncWith(testSettings(sim, simAppIds(apps), db))).results[0]!.status).toBe('ok');
});
afterAll(async () => {
  await sim.close();
  tmp.cleanup();
});

// A month of the simulator's data (its calls end now), at 10:00 UTC.
const day = (daysAgo: number): string => new Date((DEFAULT_NOW - daysAgo * 86_400) * 1000).toISOString().slice(0, 10);
const FROM = day(40);
const TO = day(10);
const total = (stdout: string): number => (JSON.parse(stdout) as { summary: { calls: number }[] }).summary.reduce((n, s) => n + s.calls, 0);

describe('reconcile --from/--to: a time that names its zone in words', () => {
  it('reads it as that zone, on any machine zone, as the same window in ISO form', async () => {
    const iso = await runCli(['reconcile', '--database', db, '--from', `${FROM}T10:00:00Z`, '--to', `${TO}T10:00:00Z`, '--format', 'json']);
    expect(iso.code, iso.stderr).toBe(0);
    expect(total(iso.stdout)).toBeGreaterThan(0);
    for (const tz of ['UTC', 'America/New_York']) {
      for (const [from, to] of [[`${FROM} 10:00 UTC`, `${TO} 10:00 UTC`], [`${FROM} 10:00:00 GMT`, `${TO} 10:00:00 GMT`]] as const) {
        const res = await runCli(['reconcile', '--database', db, '--from', from, '--to', to, '--format', 'json'], { TZ: tz });
        expect(res.code, `${tz} ${from}: ${res.stderr}`).toBe(0);
        expect(total(res.stdout)).toBe(total(iso.stdout));
      }
      // Without a zone: UTC (probe68 F1), with seconds, minutes only, or fractions.
      for (const from of [`${FROM}T10:00`, `${FROM} 10:00:00`, `${FROM}T10:00:00.000`]) {
        const res = await runCli(['reconcile', '--database', db, '--from', from, '--to', `${TO}T10:00:00Z`, '--format', 'json'], { TZ: tz });
        expect(res.code, `${tz} ${from}: ${res.stderr}`).toBe(0);
        expect(total(res.stdout)).toBe(total(iso.stdout));
      }
    }
  }, 120_000);
});
