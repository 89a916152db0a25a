import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * A known gap of `detailFetch: auto` (hostile probe, session 28, helper-60): list entries that
 * differ from Get Call on a few calls only, in a way the entry itself cannot show. Here List Calls
 * shows one participant per user (its totalParticipants counting users) where Get Call shows one
 * per device: on calls where someone used two devices (1 call in 20), the second device and its
 * minutes are not stored from the entry.
 *
 * Session 29 narrowed it: the audits spread over a run are drawn at random (they sat at the 16th,
 * 32nd, 64th… entry, which this list's differing calls never were), and each run draws
 * LISTED_AUDITS calls that earlier runs stored from their entries and compares them with Get Call.
 * A run still meets a difference on 5 % of its calls only by chance, so one run can end ok with the
 * devices missing; the gap test fails then, and runs only with CALLSYNC_GAPS=1
 * (`CALLSYNC_GAPS=1 npx vitest run test/reliability/list-entry.known-gaps.test.ts`). The test
 * below it holds today: night after night, the draws find the difference, and that run ends with
 * every device stored.
 */
const tmp = tempDir('callsync-list-entry-gaps-');
afterAll(() => tmp.cleanup());

/** The probe's service: every 20th call (at the 10th place) has a second device its list entry leaves out. */
async function collapsingService(): Promise<{ service: FakeCallsService; twoDevices: Set<string> }> {
  const twoDevices = new Set<string>();
  const service = await FakeCallsService.start({
    seed: 502, calls: 300, ongoing: 0,
    listEntry: (e, c) => {
      if (!twoDevices.has(c.sessionId)) return e;
      const seen = new Set<string>();
      const kept = (e.participants as Wire[]).filter((p) => !seen.has(String(p.uid)) && seen.add(String(p.uid)));
      return { ...e, participants: kept, totalParticipants: kept.length };
    },
  });
  const order = [...service.calls].sort((a, b) => b.initiatedAt - a.initiatedAt || (a.sessionId < b.sessionId ? -1 : 1));
  order.forEach((c, i) => {
    if ((i + 1) % 20 === 10 && c.status === 'ended') twoDevices.add(c.sessionId);
  });
  for (const c of service.calls.filter((x): x is FakeCall => twoDevices.has(x.sessionId))) {
    const first = c.participants[0]!;
    const m = Math.max(0.05, first.totalDuration / 2);
    c.participants.push({ ...first, deviceId: `${first.deviceId}-phone`, joinedAt: first.joinedAt! + 5, totalAudioMinutes: c.type === 'audio' ? m : 0, totalVideoMinutes: c.type === 'video' ? m : 0, totalDuration: m });
    c.totalParticipants = c.participants.length;
    if (c.type === 'audio') c.totalAudioMinutes = (c.totalAudioMinutes as number) + m;
    else c.totalVideoMinutes = (c.totalVideoMinutes as number) + m;
    c.totalDurationInMinutes = (c.totalDurationInMinutes as number) + m;
  }
  return { service, twoDevices };
}

/** The two-device calls whose stored participant rows are not the service's. */
async function short(service: FakeCallsService, twoDevices: ReadonlySet<string>, database: string): Promise<string[]> {
  const rows = await withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'participant_rows']).execute());
  const stored = new Map(rows.map((x) => [x.session_id, x.participant_rows]));
  return [...twoDevices].filter((id) => stored.get(id) !== service.calls.find((c) => c.sessionId === id)!.participants.length);
}

const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 2, requestTimeoutMs: 2_000 } as const;

describe.runIf(process.env.CALLSYNC_GAPS === '1')('known gaps of trusted list entries: never ok with a device missing', () => {
  it('entries collapsing a second device per user, on calls the audit does not sample', async () => {
    const { service, twoDevices } = await collapsingService();
    try {
      const database = join(tmp.dir, 'collapsed.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      for (const full of [false, true]) {
        const r = (await syncWith(settings, { full })).results[0]!;
        if (r.status === 'ok') expect({ full, short: await short(service, twoDevices, database) }).toEqual({ full, short: [] });
      }
    } finally {
      await service.close();
    }
  }, 120_000);
});

describe('trusted list entries differing on a few calls: found by the draws within days', () => {
  it('nightly runs draw calls stored from entries until one differs; that run ends with every device stored, ok', async () => {
    const { service, twoDevices } = await collapsingService();
    try {
      const database = join(tmp.dir, 'nightly.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const nights: string[] = [];
      // Each night draws 8 of ~285 calls stored from entries, 13 of them short: ~31 % a night (the
      // run's own drawn audits add to it); 40 nights leave it unfound about once in 3 million. In
      // six trial runs it was found on the first to the fourth night.
      for (let night = 0; night < 40; night++) {
        const r = (await syncWith(settings)).results[0]!;
        const missing = await short(service, twoDevices, database);
        nights.push(`${r.status}:${missing.length}`);
        if (missing.length === 0) break;
        expect(r.status).toBe('ok');
        // A night passes: what the run stored was written hours ago (the draw leaves the last hour's alone).
        await withStore(database, ({ db }) => sql`update calls set synced_at = synced_at - 7200`.execute(db));
      }
      expect(nights.at(-1)).toBe('ok:0');
      expect(await short(service, twoDevices, database)).toEqual([]);
    } finally {
      await service.close();
    }
  }, 120_000);
});
