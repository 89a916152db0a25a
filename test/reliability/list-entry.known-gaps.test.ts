import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * A known gap of `detailFetch: auto` (hostile probe, session 28, helper-60): list entries that
 * differ from Get Call on a few calls only, in a way the entry itself cannot show. Here List Calls
 * shows one participant per user (its totalParticipants counting users) where Get Call shows one
 * per device: on calls where someone used two devices, the second device and its minutes are
 * never stored, ok, also after `sync --full`. The list audit samples entries 1–8, 16, 32, …; the
 * settle audit samples only calls fetched with Get Call. Fails while the gap stands, so it runs only
 * with CALLSYNC_GAPS=1 (`CALLSYNC_GAPS=1 npx vitest run test/reliability/list-entry.known-gaps.test.ts`).
 */
const tmp = tempDir('callsync-list-entry-gaps-');
afterAll(() => tmp.cleanup());

describe.runIf(process.env.CALLSYNC_GAPS === '1')('known gaps of trusted list entries: never ok with a device missing', () => {
  it('entries collapsing a second device per user, on calls the audit does not sample', async () => {
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
    try {
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
      const database = join(tmp.dir, 'collapsed.db');
      const settings = settingsAt(service.baseUrls('app1'), database, { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 2, requestTimeoutMs: 2_000 });
      for (const full of [false, true]) {
        const r = (await syncWith(settings, { full })).results[0]!;
        const rows = await withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'participant_rows']).execute());
        const stored = new Map(rows.map((x) => [x.session_id, x.participant_rows]));
        const short = [...twoDevices].filter((id) => stored.get(id) !== service.calls.find((c) => c.sessionId === id)!.participants.length);
        if (r.status === 'ok') expect({ full, short }).toEqual({ full, short: [] });
      }
    } finally {
      await service.close();
    }
  }, 120_000);
});
