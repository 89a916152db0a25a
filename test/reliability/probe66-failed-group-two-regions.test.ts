import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load.js';
import { syncWith, tempDir, withStore, KEY_ENV, TEST_KEY } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';

/**
 * probe66: a group remembered as failed (synced_groups status 'failed', fe77abd) is retried by the
 * next run of the app whatever region that run is for: one appId in two regions, the other
 * region's host does not know the group (ERR_GUID_NOT_FOUND), marks it not found and empties its
 * members; the region that holds it never retries it, and ends ok with none of its members.
 */
const tmp = tempDir('callsync-probe66-groups-');
afterAll(() => tmp.cleanup());
const NOW = (): number => Math.floor(Date.now() / 1000);

describe('probe66: a failed group and a second region of the same app', () => {
  it("the other region's run does not take the group for gone; the region holding it ends ok only with its members", async () => {
    const us = await FakeCallsService.start({ calls: 400, ongoing: 0, seed: 6601, spanHours: 144, groups: 30 });
    const eu = await FakeCallsService.start({ calls: 40, ongoing: 0, seed: 6602 });
    const newestByGroup = new Map<string, number>();
    for (const c of us.calls) if (c.receiverType === 'group') newestByGroup.set(c.receiver, Math.max(newestByGroup.get(c.receiver) ?? 0, c.initiatedAt));
    const [guid, newest] = [...newestByGroup].filter(([g]) => !eu.members.has(g)).sort((a, b) => a[1] - b[1])[0]!;
    expect(newest).toBeLessThan(NOW() - 4 * 3600);
    us.membersForbidden.add(guid);
    const database = join(tmp.dir, 'regions.db');
    const app = (region: 'us' | 'eu', fake: FakeCallsService) => ({ appId: 'app1', region, apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...fake.baseUrls('app1') });
    const settings = (apps: ReturnType<typeof app>[]) => resolveConfig({ database, apps, pageSize: 50, lookbackHours: 1, requestTimeoutMs: 2_000 }, { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' });
    try {
      const first = (await syncWith(settings([app('us', us)]))).results[0]!;
      expect(first.status).toBe('partial'); // the group refused: its members unknown
      const other = (await syncWith(settings([app('eu', eu)]))).results[0]!;
      expect(other.status).toBe('ok');
      us.membersForbidden.delete(guid);
      us.addCall({ at: NOW() - 120, status: 'ended' });
      const again = (await syncWith(settings([app('us', us)]))).results[0]!;
      const stored = await withStore(database, async ({ db }) => (await db.selectFrom('group_members').select('uid').where('guid', '=', guid).execute()).length);
      const truth = us.members.get(guid)!.length;
      if (again.status === 'ok') expect({ status: again.status, stored }).toEqual({ status: 'ok', stored: truth });
      else expect(again.status).toBe('partial');
    } finally {
      await us.close();
      await eu.close();
    }
  });
  it('a failed group deleted at the service before the next run: marked not found, that run ok, the one after does not ask again', async () => {
    const us = await FakeCallsService.start({ calls: 400, ongoing: 0, seed: 6603, spanHours: 144, groups: 30 });
    const newestByGroup = new Map<string, number>();
    for (const c of us.calls) if (c.receiverType === 'group') newestByGroup.set(c.receiver, Math.max(newestByGroup.get(c.receiver) ?? 0, c.initiatedAt));
    const [guid] = [...newestByGroup].sort((a, b) => a[1] - b[1])[0]!;
    us.membersForbidden.add(guid);
    const database = join(tmp.dir, 'deleted.db');
    const settings = resolveConfig({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...us.baseUrls('app1') }], pageSize: 50, lookbackHours: 1, requestTimeoutMs: 2_000 }, { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' });
    try {
      expect((await syncWith(settings)).results[0]!.status).toBe('partial');
      us.members.delete(guid);
      const second = (await syncWith(settings)).results[0]!;
      const seen = (): number => (us as unknown as { server: { requests: { url: string }[] } }).server.requests.filter((r) => r.url.includes(`/groups/${encodeURIComponent(guid)}/members`)).length;
      const before = seen();
      const third = (await syncWith(settings)).results[0]!;
      const row = await withStore(database, async ({ db }) => db.selectFrom('synced_groups').select(['status']).where('guid', '=', guid).executeTakeFirst());
      expect({ second: second.status, third: third.status, status: row?.status, asked: seen() - before }).toEqual({ second: 'ok', third: 'ok', status: 'not_found', asked: 0 });
    } finally {
      await us.close();
    }
  });
});
