import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * A call listed twice in one listing with different entries gets Get Call (never last-one-wins).
 * But the check "unchanged since the last sync" came first: when the stored entry was the current
 * one and a stale copy was listed before it, the copy (changed) was stored from the list and the
 * current entry (unchanged) skipped, so the database flipped back to the stale state on every other
 * run (a hostile fake, probe round 4: 7 of 12 such calls, ok).
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24 * 7, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;

const tmp = tempDir('callsync-listed-twice-');
afterAll(() => tmp.cleanup());

describe('a call listed twice, a stale copy first', () => {
  it('holds the current state after every run, ok', async () => {
    const service = await FakeCallsService.start({ seed: 71, calls: 150, ongoing: 0, staleCopyFirst: 5 });
    try {
      const database = join(tmp.dir, 'twice.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const victims = service.calls.filter((c, i) => i % 5 === 0 && c.status === 'ended' && c.participants.length >= 2);
      expect(victims.length).toBeGreaterThan(5);
      for (let run = 1; run <= 4; run++) {
        const r = (await syncWith(settings)).results[0]!;
        expect(r.status, r.error).toBe('ok');
        const stored = await withStore(database, async ({ db }) => {
          const rows = await db.selectFrom('call_participants').select(['session_id']).where('session_id', 'in', victims.map((c) => c.sessionId)).execute();
          const n = new Map<string, number>();
          for (const x of rows) n.set(x.session_id, (n.get(x.session_id) ?? 0) + 1);
          const calls = await db.selectFrom('calls').select(['session_id', 'ended_at']).where('session_id', 'in', victims.map((c) => c.sessionId)).execute();
          return { n, ended: new Map(calls.map((c) => [c.session_id, c.ended_at])) };
        });
        const stale = victims.filter((c) => stored.n.get(c.sessionId) !== c.participants.length || stored.ended.get(c.sessionId) !== c.endedAt).map((c) => c.sessionId);
        expect(stale, `run ${run}`).toEqual([]);
      }
    } finally {
      await service.close();
    }
  });
});
