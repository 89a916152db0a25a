import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import type { Settings } from '../../src/config/load.js';
import { FakeCallsService, type FakeCall } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * Details that change after Get Call was asked, under a list entry that does not (a hostile-fake
 * probe, round 5, F5): a service that works out each participant's minutes after the call answered
 * one joined participant at 0 minutes beside others with minutes, and the next night its real
 * minutes. Only calls whose joined participants were all at 0 were asked again, so those minutes
 * were never read, with every run ok.
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 2, requestTimeoutMs: 2_000 } as const;

const tmp = tempDir('callsync-late-minutes-');
afterAll(() => tmp.cleanup());

/** Calls whose stored participant minutes differ from the service's (by session id). */
async function minutesOff(database: string, service: FakeCallsService): Promise<string[]> {
  const rows = await withStore(database, ({ db }) =>
    db.selectFrom('call_participants').select(['session_id', (eb) => eb.fn.sum<number>('total_duration_minutes').as('minutes')]).groupBy('session_id').execute(),
  );
  const stored = new Map(rows.map((r) => [r.session_id, Number(r.minutes)]));
  return service.calls
    .filter((c) => Math.abs((stored.get(c.sessionId) ?? NaN) - c.participants.reduce((s, p) => s + p.totalDuration, 0)) > 1e-9)
    .map((c) => c.sessionId);
}

/**
 * Two nights against `service`: the first stores exactly the calls `isLate` names short of minutes
 * (the service's first answers), the second, after the service has settled them, stores every call
 * exact; both ok. Returns the settings and the late calls for further runs.
 */
async function twoNights(service: FakeCallsService, name: string, isLate: (c: FakeCall) => boolean): Promise<{ settings: Settings; database: string; late: string[] }> {
  const database = join(tmp.dir, `${name}.db`);
  const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
  // Within settleDays (3) of their end: the calls span the last two days.
  const late = service.calls.filter(isLate).map((c) => c.sessionId).sort();
  expect(late.length).toBeGreaterThan(3);
  const first = (await syncWith(settings)).results[0]!;
  expect(first.status, first.error).toBe('ok');
  expect((await minutesOff(database, service)).sort()).toEqual(late);
  service.settleMinutes();
  const second = (await syncWith(settings)).results[0]!;
  expect(second.status, second.error).toBe('ok');
  expect(await minutesOff(database, service)).toEqual([]);
  return { settings, database, late };
}

describe('details worked out after the call, under an unchanged list entry', () => {
  it('is read again on the next run (its list entry unchanged) until it has minutes: exact, ok', async () => {
    const service = await FakeCallsService.start({ seed: 71, calls: 120, ongoing: 0, listMinimal: true, lateMinutes: 4, spanHours: 48 });
    try {
      const { settings, late } = await twoNights(service, 'late', (c) => service.minutesLate(c));
      // Settled, they are not asked for on every run: the run after the follow-up asks once more
      // (a follow-up's Get stores no list fingerprint, so the listing takes the entry as new), the
      // one after that not at all.
      await syncWith(settings);
      const asked = service.getIds.length;
      const fourth = (await syncWith(settings)).results[0]!;
      expect(fourth.status, fourth.error).toBe('ok');
      expect(service.getIds.slice(asked).filter((id) => late.includes(id))).toEqual([]);
    } finally {
      await service.close();
    }
  });

  // Probe round 17 (c): list entries that state the minutes, Get Call answering a participant at
  // zero for calls past settleDays (the span is a week): stored as zero, ok, also after `sync --full`.
  it('an entry stating the minutes Get Call answers at zero: kept as listed and asked again (partial), then exact, ok', async () => {
    const service = await FakeCallsService.start({ seed: 73, calls: 120, ongoing: 0, lateMinutes: 4, spanHours: 168 });
    try {
      const database = join(tmp.dir, 'entry-states-minutes.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status).toBe('partial');
      // Kept as listed: the entry's minutes, which are the service's.
      expect(await minutesOff(database, service)).toEqual([]);
      service.settleMinutes();
      const second = (await syncWith(settings)).results[0]!;
      expect(second.status, second.error).toBe('ok');
      expect(await minutesOff(database, service)).toEqual([]);
    } finally {
      await service.close();
    }
  });

  // Round 6 (F1): Get Call answered one of a call's two participants the night it ended and both
  // the next; fewer entries than totalParticipants was not taken as unsettled, so the second
  // participant and their minutes were never read, ok, and `sync --full` did not heal it.
  it('a participant Get Call leaves out at first (fewer than totalParticipants) is read on the next run: exact, ok', async () => {
    const service = await FakeCallsService.start({ seed: 72, calls: 120, ongoing: 0, listMinimal: true, lateParticipants: 4, spanHours: 48 });
    try {
      const { database, late } = await twoNights(service, 'late-participant', (c) => service.participantLate(c));
      const rows = await withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'participant_rows']).where('session_id', 'in', late).execute());
      for (const r of rows) expect(r.participant_rows).toBe(service.calls.find((c) => c.sessionId === r.session_id)!.participants.length);
    } finally {
      await service.close();
    }
  });
});
