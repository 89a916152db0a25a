import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { testDialects, databaseFactory } from '../helpers/databases.js';
import { runCli } from '../helpers/cli.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe73 (known open item): a call's minutes are flagged (kept out of every billed total, counted
 * apart) when no call can reach them: `minutes_beyond_wall_clock` holds them to the call's wall
 * clock. A final call whose wall clock cannot be measured, because it has no end or ends before it
 * starts, skipped that check: a participant stated with 1,000 minutes (under the 24 h cap) on such a
 * call was billed in user_minutes, unflagged, exit 0, while the same minutes on a call with an end
 * two minutes after its start were flagged. The more broken the record, the less it was checked.
 * Such a call's minutes are now counted apart too: no clock vouches for them.
 */
const dialects = await testDialects();
const tmp = tempDir('probe73-unmeasured-');
afterAll(() => tmp.cleanup());

const STATED = 1_000;
const minutesOf = (c: FakeCall): number => c.participants.reduce((n, p) => n + p.totalDuration, 0);
const monthOf = (sec: number): string => new Date(sec * 1000).toISOString().slice(0, 7);

describe.each(dialects)('minutes no clock can vouch for are flagged [%s]', (dialect) => {
  const dbs = databaseFactory(dialect, tmp.dir);
  afterAll(() => dbs.dropAll());

  it('a final call without an end, and one that ends before it starts: their minutes are in flagged_user_minutes, not user_minutes', async () => {
    const service = await FakeCallsService.start({ seed: 73, calls: 40, ongoing: 0, spanHours: 1 });
    try {
      const candidates = service.calls.filter((c) => c.status === 'ended' && c.startedAt !== undefined && c.participants.some((p) => p.isJoined));
      const month = monthOf(candidates[0]!.startedAt!);
      const [noEnd, backwards] = candidates.filter((c) => monthOf(c.startedAt!) === month) as [FakeCall, FakeCall];
      for (const c of [noEnd, backwards]) {
        const p = c.participants.find((x) => x.isJoined)!;
        Object.assign(p, { totalDuration: STATED, totalAudioMinutes: c.type === 'audio' ? STATED : 0, totalVideoMinutes: c.type === 'video' ? STATED : 0 });
      }
      delete noEnd.endedAt;
      for (const p of noEnd.participants) delete p.leftAt;
      backwards.endedAt = backwards.startedAt! - 600;

      const db = await dbs.fresh('unmeasured');
      expect((await syncWith(settingsAt(service.baseUrls(), db, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      const stored = await withStore(db, ({ db: k }) => k.selectFrom('calls').select(['session_id', 'is_final', 'ended_at', 'started_at']).where('session_id', 'in', [noEnd.sessionId, backwards.sessionId]).orderBy('session_id').execute());
      expect(stored.map((s) => s.is_final)).toEqual([1, 1]);

      const inMonth = service.calls.filter((c) => c.startedAt !== undefined && monthOf(c.startedAt) === month);
      const res = await runCli(['export', 'billing', '--database', db, '--month', month]);
      expect(res.code, res.stderr).toBe(0);
      const total = (parse(res.stdout, { columns: true }) as Record<string, string>[]).find((r) => r.row_kind === 'total')!;
      expect(Number(total.calls)).toBe(inMonth.length);
      expect(Number(total.flagged_calls)).toBe(2);
      expect(Number(total.flagged_user_minutes)).toBeCloseTo(minutesOf(noEnd) + minutesOf(backwards), 3);
      expect(Number(total.user_minutes)).toBeCloseTo(inMonth.filter((c) => c !== noEnd && c !== backwards).reduce((n, c) => n + minutesOf(c), 0), 3);

      // reconcile counts the same calls apart, and says why.
      const rec = await runCli(['reconcile', '--database', db, '--format', 'json']);
      expect(rec.code, rec.stderr).toBe(0);
      expect((JSON.parse(rec.stdout) as { flaggedCalls: number }).flaggedCalls).toBe(2);
      const issues = await withStore(db, ({ db: k }) => k.selectFrom('call_reconciliation').select(['session_id', 'issues']).where('session_id', 'in', [noEnd.sessionId, backwards.sessionId]).orderBy('session_id').execute());
      expect(issues).toEqual(
        [
          { session_id: noEnd.sessionId, issues: expect.stringMatching(/minutes_beyond_wall_clock.*final_without_end/) as unknown },
          { session_id: backwards.sessionId, issues: expect.stringMatching(/negative_duration.*minutes_beyond_wall_clock/) as unknown },
        ].sort((a, b) => (a.session_id < b.session_id ? -1 : 1)),
      );
    } finally {
      await service.close();
    }
  }, 60_000);
});
