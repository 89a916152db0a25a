import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { testDialects, databaseFactory } from '../helpers/databases.js';
import { runCli } from '../helpers/cli.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe68 F7: a call's minutes are flagged (kept out of every billed total, counted apart) when they
 * are "a figure no call can reach" (docs/schema.md): `minutes_beyond_wall_clock` holds "each entry
 * can be in the call for its whole wall clock", and compared the SUM of the entries with
 * wall clock × entries × 1.5 + 10. Entries that never joined (an invited group's unanswered
 * members) count in `entries` with 0 minutes, so they lent their room to one entry: a participant
 * stated with 1.75 × the call's length + 10 minutes, more than the call's whole wall clock can hold,
 * was billed in user_minutes, unflagged, exit 0, whenever the call had other entries (here three
 * entries of a 4-minute call: one stated with 17 minutes; a group call's unanswered invitees, at 0
 * minutes, leave room for more). The check now holds each entry, too, to what one entry can reach
 * (the largest entry's minutes against wall clock × 1.5 + 10).
 */
const dialects = await testDialects();
const tmp = tempDir('probe68-entry-wall-');
afterAll(() => tmp.cleanup());

describe.each(dialects)('one entry beyond what the call can hold is flagged [%s]', (dialect) => {
  const dbs = databaseFactory(dialect, tmp.dir);
  afterAll(() => dbs.dropAll());

  it("its minutes are in flagged_user_minutes, not in user_minutes, though the call's sum is within entries × wall clock", async () => {
    let target = '';
    let uid = '';
    let inflated = 0;
    const inflate = (w: Record<string, unknown>): Record<string, unknown> => {
      if (w.sessionId !== target) return w;
      const ps = (w.participants as Record<string, unknown>[]).map((p) => (p.uid === uid ? { ...p, totalDuration: inflated, totalAudioMinutes: w.type === 'audio' ? inflated : 0, totalVideoMinutes: w.type === 'video' ? inflated : 0 } : p));
      return { ...w, participants: ps };
    };
    const service = await FakeCallsService.start({ seed: 68, calls: 80, ongoing: 0, spanHours: 3, listEntry: inflate, getAnswer: inflate });
    try {
      const wall = (c: FakeCall): number => (c.endedAt! - c.startedAt!) / 60;
      const call = service.calls.find(
        (c) => c.status === 'ended' && c.startedAt !== undefined && c.endedAt !== undefined && wall(c) >= 2 && c.participants.length >= 3,
      )!;
      expect(call, 'a call of three entries or more').toBeDefined();
      target = call.sessionId;
      const joined = call.participants.find((p) => p.isJoined)!;
      uid = joined.uid;
      const w = wall(call);
      inflated = Math.round((1.75 * w + 10) * 60) / 60;
      const others = call.participants.filter((p) => p !== joined).reduce((n, p) => n + p.totalDuration, 0);
      // Why the call's sum passed the check: within wall clock × entries × 1.5 + 10, under 24 h.
      expect(inflated + others).toBeLessThanOrEqual(w * call.participants.length * 1.5 + 10);
      expect(inflated).toBeLessThan(1440);
      // No entry can be in a call longer than the call: this one states more than 1.5 × its length + 10.
      expect(inflated).toBeGreaterThan(w * 1.5 + 10);

      const db = await dbs.fresh('entrywall');
      expect((await syncWith(settingsAt(service.baseUrls(), db, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      const flagged = await withStore(db, async ({ db: k }) => k.selectFrom('call_figures').select(['session_id', 'flagged', 'issue_bits']).where('flagged', '=', 1).execute());
      expect(flagged.map((f) => f.session_id)).toEqual([target]);

      const started = service.calls.filter((c) => c.startedAt !== undefined);
      const minutesOf = (c: FakeCall): number => c.participants.reduce((n, p) => n + (c.sessionId === target && p.uid === uid ? inflated : p.totalDuration), 0);
      const month = new Date(call.startedAt! * 1000).toISOString().slice(0, 7);
      const inMonth = started.filter((c) => new Date(c.startedAt! * 1000).toISOString().startsWith(month));
      const res = await runCli(['export', 'billing', '--database', db, '--month', month]);
      expect(res.code, res.stderr).toBe(0);
      const total = (parse(res.stdout, { columns: true }) as Record<string, string>[]).find((r) => r.row_kind === 'total')!;
      expect(Number(total.flagged_calls)).toBe(1);
      expect(Number(total.flagged_user_minutes)).toBeCloseTo(minutesOf(call), 3);
      expect(Number(total.user_minutes)).toBeCloseTo(inMonth.filter((c) => c.sessionId !== target).reduce((n, c) => n + minutesOf(c), 0), 3);
    } finally {
      await service.close();
    }
  });
});
