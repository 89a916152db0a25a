import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { computeBilling } from '../../src/export/billing.js';
import { resolvePeriod } from '../../src/export/period.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe64 F1: a call belongs to the period of its start. The service's times may come in
 * milliseconds (converted, as api-facts.md's Usage example shows them) or as ISO 8601 text with a
 * fraction of a second. Both were converted to seconds with Math.round, so a call started in the
 * last half second of a month (2025-11-30T23:59:59.6Z) was stored as started 2025-12-01T00:00:00Z:
 * billed in December, missing from November's export, report and views, exit 0, nothing said.
 * The instant is in November; its second is 23:59:59 (floor), never the next one.
 */
const tmp = tempDir('probe64-fraction-');
afterAll(() => tmp.cleanup());

/** 2025-11-30T23:59:59Z: the last whole second of November (UTC). */
const LAST_SECOND = Date.UTC(2025, 10, 30, 23, 59, 59) / 1000;

async function syncOneCallAt(name: string, wireStart: (call: FakeCall) => unknown): Promise<{ db: string; sessionId: string; minutes: number }> {
  let target = '';
  const spell = (w: Wire): Wire => (w.sessionId === target ? { ...w, startedAt: wireStart(w as FakeCall) } : w);
  const service = await FakeCallsService.start({ seed: 3, calls: 6, ongoing: 0, spanHours: 1, listEntry: spell, getAnswer: spell });
  try {
    const c = service.calls.find((x) => x.status === 'ended' && x.startedAt !== undefined && x.participants.some((p) => p.totalDuration > 0))!;
    // The call moved to the last second of November, its participants and end with it.
    const shift = LAST_SECOND - c.startedAt!;
    c.initiatedAt += shift - 3;
    c.startedAt = LAST_SECOND;
    c.endedAt! += shift;
    for (const p of c.participants) {
      if (p.joinedAt !== undefined) p.joinedAt += shift + 1;
      if (p.leftAt !== undefined) p.leftAt += shift;
    }
    target = c.sessionId;
    const db = join(tmp.dir, `${name}.db`);
    expect((await syncWith(settingsAt(service.baseUrls(), db, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
    return { db, sessionId: c.sessionId, minutes: c.participants.reduce((n, p) => n + p.totalDuration, 0) };
  } finally {
    await service.close();
  }
}

async function expectBilledInNovember(db: string, sessionId: string, minutes: number): Promise<void> {
  await withStore(db, async ({ db }) => {
    const stored = await db.selectFrom('calls').select(['started_at', 'started_day', 'started_month']).where('session_id', '=', sessionId).executeTakeFirstOrThrow();
    expect(stored).toEqual({ started_at: LAST_SECOND, started_day: '2025-11-30', started_month: '2025-11' });
    const total = async (month: string) => (await computeBilling(db, resolvePeriod({ month }))).find((r) => r.row_kind === 'total');
    const november = await total('2025-11');
    expect(november?.calls).toBe(1);
    expect(november?.user_minutes).toBeCloseTo(minutes, 9);
    expect((await total('2025-12'))?.calls ?? 0).toBe(0);
  });
}

describe('a call started in the last fraction of a second of a month is billed in that month', () => {
  it('startedAt in milliseconds (1764547199600)', async () => {
    const { db, sessionId, minutes } = await syncOneCallAt('ms', () => LAST_SECOND * 1000 + 600);
    await expectBilledInNovember(db, sessionId, minutes);
  });

  it('startedAt as ISO 8601 text with a fraction (2025-11-30T23:59:59.600Z)', async () => {
    const { db, sessionId, minutes } = await syncOneCallAt('iso', () => '2025-11-30T23:59:59.600Z');
    await expectBilledInNovember(db, sessionId, minutes);
  });

  it('startedAt as a number of seconds with a fraction (1764547199.6)', async () => {
    const { db, sessionId, minutes } = await syncOneCallAt('frac', () => LAST_SECOND + 0.6);
    await expectBilledInNovember(db, sessionId, minutes);
  });
});
