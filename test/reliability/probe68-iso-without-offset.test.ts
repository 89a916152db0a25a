import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { simAppIds, startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';

/**
 * probe68 F1: every time callsync shows or stores is UTC, and a call's ISO time without an offset is
 * read as UTC (source/schemas.ts). `callsync reconcile --from/--to` (and `sync --since/--until`)
 * read an ISO time without an offset with Date.parse, which takes the machine's own zone: on a
 * laptop in New York `reconcile --from 2025-11-20T00:00:00 --to 2025-11-21T00:00:00` summed the
 * calls of 04:00Z to 04:00Z the next day, its figures another window's than the same command gave
 * in the UTC container, exit 0, nothing said.
 */
const tmp = tempDir('probe68-iso-');
afterAll(() => tmp.cleanup());

let sim: Simulator;
let db = '';
beforeAll(async () => {
  const apps = [{ calls: 600 }];
  sim = await startTestSim(apps);
  db = join(tmp.dir, 'calls.db');
  expect((await syncWith(testSettings(sim, simAppIds(apps), db))).results[0]!.status).toBe('ok');
});
afterAll(async () => sim.close());

interface Summary {
  summary: { calls: number; user_minutes: number }[];
}

describe('an ISO time without an offset is UTC whatever the machine zone', () => {
  it('reconcile --from/--to on a machine in America/New_York sums the UTC window', async () => {
    // The busiest UTC day of the data, so that the hours a zone shift moves in or out hold calls.
    const { day, shifted, calls, minutes } = await withStore(db, async ({ db: k }) => {
      const top = await k.selectFrom('calls').select((eb) => ['started_day', eb.fn.countAll<number>().as('n')]).where('started_day', 'is not', null).groupBy('started_day').orderBy('n', 'desc').orderBy('started_day').limit(1).executeTakeFirstOrThrow();
      const start = Date.parse(`${top.started_day!}T00:00:00Z`) / 1000;
      const inWindow = (from: number, to: number) =>
        k.selectFrom('calls').select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('participant_total_minutes').as('m')]).where('started_at', '>=', from).where('started_at', '<', to).executeTakeFirstOrThrow();
      const utc = await inWindow(start, start + 86_400);
      // The first five hours of the UTC day: what New York's offset moves out of the window.
      const early = await inWindow(start, start + 5 * 3600);
      return { day: top.started_day!, shifted: Number(early.n), calls: Number(utc.n), minutes: Number(utc.m) };
    });
    expect(shifted).toBeGreaterThan(0);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
      const res = await runCli(['reconcile', '--database', db, '--from', `${day}T00:00:00`, '--to', `${next}T00:00:00`, '--format', 'json'], { TZ: tz });
      expect(res.code, res.stderr).toBe(0);
      const report = JSON.parse(res.stdout) as Summary;
      expect({ tz, calls: report.summary.reduce((n, s) => n + s.calls, 0) }).toEqual({ tz, calls });
      expect(report.summary.reduce((n, s) => n + s.user_minutes, 0)).toBeCloseTo(minutes, 6);
    }
  });
});
