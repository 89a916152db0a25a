import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';
import { ABSURD, syncedWithInflatedCall } from './support/inflated-call.js';

/**
 * probe68 F2: a call whose minutes are implausible (`flagged`) is kept out of every minutes figure
 * of the billing export and of the report (its reconciliation table too: probe64 F2), and counted
 * apart. `callsync reconcile` summed it into its summary's `user_minutes`, `call_total_minutes` and
 * `delta_minutes` per relation: one participant stated with 50,000 minutes on a short call made the
 * month's `participant_sum` row 50,000 minutes larger than the export's and the report's
 * user-minutes of the same calls, and the CSV (`--format csv`, the one finance loads) said nothing
 * of it (only the table printed a line, the JSON a total beside the rows). Each summary row now
 * covers the unflagged calls' minutes, as billing does, and says what it left out in its own
 * `flagged_calls` and `flagged_user_minutes`.
 */
const SEED = 68;
const tmp = tempDir('probe68-reconcile-flagged-');
afterAll(() => tmp.cleanup());

type Csv = Record<string, string>[];

describe('reconcile counts flagged minutes apart, as billing and the report do', () => {
  it('summary rows in CSV and JSON: unflagged minutes equal the export, flagged ones in their own columns', async () => {
    const db = join(tmp.dir, 'flagged.db');
    const { service, call, uid } = await syncedWithInflatedCall(SEED, db, (ended) => ended[0]!);
    const target = call.sessionId;
    try {

      // Ground truth from the fake: user-minutes of the calls that started, the inflated one apart.
      const started = service.calls.filter((c) => c.startedAt !== undefined);
      const minutesOf = (c: (typeof started)[number]): number => c.participants.reduce((n, p) => n + (c.sessionId === target && p.uid === uid ? ABSURD : p.totalDuration), 0);
      const unflagged = started.filter((c) => c.sessionId !== target).reduce((n, c) => n + minutesOf(c), 0);
      const flagged = minutesOf(call);
      const months = [...new Set(started.map((c) => new Date(c.startedAt! * 1000).toISOString().slice(0, 7)))];
      expect(months).toHaveLength(1);
      const [y, m] = months[0]!.split('-').map(Number) as [number, number];
      const next = new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);

      const exported = await runCli(['export', 'billing', '--database', db, '--month', months[0]!]);
      expect(exported.code, exported.stderr).toBe(0);
      const total = (parse(exported.stdout, { columns: true }) as Csv).find((r) => r.row_kind === 'total')!;
      expect(Number(total.user_minutes)).toBeCloseTo(unflagged, 3);
      expect(Number(total.flagged_user_minutes)).toBeCloseTo(flagged, 3);

      const csv = await runCli(['reconcile', '--database', db, '--from', `${months[0]!}-01`, '--to', next, '--format', 'csv']);
      expect(csv.code, csv.stderr).toBe(0);
      const summary = (parse(csv.stdout, { columns: true }) as Csv).filter((r) => r.section === 'summary');
      const sum = (k: string): number => summary.reduce((n, r) => n + Number(r[k] || 0), 0);
      expect(sum('calls')).toBe(started.length);
      expect(sum('user_minutes')).toBeCloseTo(unflagged, 3);
      expect(sum('user_minutes')).toBeCloseTo(Number(total.user_minutes), 3);
      expect(sum('call_total_minutes')).toBeCloseTo(Number(total.call_total_minutes), 3);
      expect(sum('delta_minutes')).toBeCloseTo(Number(total.delta_minutes), 3);
      expect(sum('flagged_calls')).toBe(1);
      expect(sum('flagged_user_minutes')).toBeCloseTo(flagged, 3);

      const json = await runCli(['reconcile', '--database', db, '--from', `${months[0]!}-01`, '--to', next, '--format', 'json']);
      const report = JSON.parse(json.stdout) as { summary: { user_minutes: number; flagged_user_minutes: number }[]; flaggedUserMinutes: number };
      expect(report.summary.reduce((n, r) => n + r.user_minutes, 0)).toBeCloseTo(unflagged, 3);
      expect(report.summary.reduce((n, r) => n + r.flagged_user_minutes, 0)).toBeCloseTo(report.flaggedUserMinutes, 6);
    } finally {
      await service.close();
    }
  });
});
