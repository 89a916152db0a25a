import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, syncWith, tempDir, TEST_KEY, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { pathAndPage, relay, startProxy, viaProxy } from './support/servers.js';

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

/**
 * The same call on two pages of one listing (a call arrived while paging and pushed every entry
 * down one: the last of page 1 is the first of page 2), changed in between (its last participant's
 * minutes worked out). Pages are written as their Get Calls finish, so the earlier page's write
 * could land last: its entry (the stale participant minutes) was stored, ok (a randomized hostile
 * fake, concurrency 4). And with Get Call leaving out `participants`, each answer took them from its
 * own entry, so the same race decided which participants were stored.
 */
describe('a call listed on two pages, changed in between, the earlier page written last', () => {
  const RACE = { ...SETTINGS, lookbackHours: 24 };

  /** The call the shift repeats (the 50th newest), a copy of its participants as they end up, and a fake whose proxy serves the earlier state on page 1 and delays `slow`'s first Get. */
  async function setUp(fake: FakeOptions, slow: (x: FakeCall, service: FakeCallsService) => string) {
    const service = await FakeCallsService.start({ seed: 72, calls: 150, ongoing: 0, spanHours: 20, retainWhileListing: 1, ...fake });
    const x = [...service.calls].sort((a, b) => b.initiatedAt - a.initiatedAt)[49]!;
    expect([x.status, x.participants.length >= 2]).toEqual(['ended', true]);
    const truth = x.participants.map((p) => ({ ...p }));
    const last = x.participants.length - 1;
    // The state page 1 shows: the last participant's minutes not yet worked out in full.
    x.participants[last] = { ...truth[last]!, totalAudioMinutes: truth[last]!.totalAudioMinutes / 2, totalVideoMinutes: truth[last]!.totalVideoMinutes / 2, totalDuration: truth[last]!.totalDuration / 2 };
    const slowId = slow(x, service);
    let delayed = false;
    const proxy = await startProxy(service.url, async (req, pass) => {
      const { path, page } = pathAndPage(req.url);
      if (path.endsWith('/calls') && page >= 2) x.participants[last] = truth[last]!;
      if (path.endsWith(`/calls/${slowId}`) && !delayed) {
        delayed = true;
        await sleep(400);
      }
      return relay(await pass());
    });
    const stored = async (database: string) =>
      withStore(database, async ({ db }) => ({
        minutes: (await db.selectFrom('call_participants').select('total_duration_minutes').where('session_id', '=', x.sessionId).orderBy('seq').execute()).map((p) => p.total_duration_minutes),
        detailError: (await db.selectFrom('calls').select('detail_error').where('session_id', '=', x.sessionId).executeTakeFirstOrThrow()).detail_error,
      }));
    return { service, proxy, x, truth: truth.map((p) => p.totalDuration), stored, close: async () => (await proxy.close(), await service.close()) };
  }

  it('Get Call leaving out participants (each answer filled from its own entry): `callsync sync` partial (exit 1) naming the call, then the current participants, ok', async () => {
    const t = await setUp({ getOmits: ['participants'] }, (x) => x.sessionId);
    try {
      const database = join(tmp.dir, 'two-pages-omits.db');
      const config = join(tmp.dir, 'two-pages-omits.json');
      writeFileSync(config, JSON.stringify({ database, ...RACE, detailFetch: 'always', liveMaxDays: 3650, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...viaProxy(t.proxy.url, 'app1') }] }));
      const first = await runCli(['sync', '--config', config, '--json'], { [KEY_ENV]: TEST_KEY });
      // Never ok with the stale minutes: partial, naming the call, its entry kept with detail_error.
      expect(first.code, first.stderr).toBe(1);
      expect(JSON.parse(first.stdout.trim().split('\n').find((l) => l.startsWith('{'))!)).toMatchObject({ status: 'partial', disputedCalls: 1 });
      expect(first.stdout + first.stderr).toContain(`listed twice with different entries while Get Call left out what the entries state (first: ${t.x.sessionId}: listed twice in this run with different entries, and Get Call left out participants`);
      expect((await t.stored(database)).detailError).toMatch(/^listed twice in this run with different entries/);

      const second = await runCli(['sync', '--config', config], { [KEY_ENV]: TEST_KEY });
      expect(second.code, second.stdout + second.stderr).toBe(0);
      expect(await t.stored(database)).toEqual({ minutes: t.truth, detailError: null });
    } finally {
      await t.close();
    }
  });

  it('Get Call answering whole, the stale entry stored from the list on a page that waited on a slow audit: the current participants, ok', async () => {
    // detailFetch auto: the stale entry is complete-looking and stored as listed; page 1 also holds
    // the first entries, audited with Get Call, one of them slow.
    const t = await setUp({}, (_x, service) => [...service.calls].sort((a, b) => b.initiatedAt - a.initiatedAt)[0]!.sessionId);
    try {
      const database = join(tmp.dir, 'two-pages-list.db');
      const first = (await syncWith(settingsAt(viaProxy(t.proxy.url, 'app1'), database, RACE))).results[0]!;
      expect(first.status, first.error).toBe('ok');
      expect(await t.stored(database)).toEqual({ minutes: t.truth, detailError: null });
    } finally {
      await t.close();
    }
  });
});
