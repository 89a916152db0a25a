import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

const dialects = await testDialects();
const SETTINGS = { detailFetch: 'auto', pageSize: 50, concurrency: 4, lookbackHours: 24 } as const;

/**
 * A group read again on a later night: a membership the service still holds unchanged is only
 * stamped as read (its rows are not rewritten), and any change (a member promoted, one who left,
 * one who joined) replaces it. The database against the fake's members after each night, on both
 * databases (PostgreSQL hands integer columns back as text: compared wrongly, every group would be
 * rewritten, or none).
 */
describe.each(dialects)('group members read again on a later night [%s]', (dialect) => {
  const tmp = tempDir('callsync-members-again-');
  const dbs = databaseFactory(dialect, tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('stores what changed, stamps what did not, and holds the service’s members each night', async () => {
    const service = await FakeCallsService.start({ calls: 40, ongoing: 0, seed: 31, spanHours: 20, groups: 3 });
    try {
      const url = await dbs.fresh('again');
      const called = [...new Set(service.calls.filter((c) => c.receiverType === 'group').map((c) => c.receiver))].sort();
      expect(called.length).toBeGreaterThanOrEqual(2);
      const stored = () =>
        withStore(url, async ({ db }) =>
          (await db.selectFrom('group_members').select(['guid', 'uid', 'scope', 'synced_at']).execute()).map((r) => ({ key: `${r.guid}/${r.uid}/${r.scope}`, guid: r.guid, syncedAt: Number(r.synced_at) })),
        );
      const truth = () => called.flatMap((g) => (service.members.get(g) ?? []).map((u) => `${g}/${u}/${service.memberScopes.get(u) ?? 'participant'}`)).sort();
      const night = async () => {
        const r = (await syncWith(settingsAt(service.baseUrls('app1'), url, SETTINGS))).results[0]!;
        expect(r.status, r.error ?? '').toBe('ok');
        const rows = await stored();
        expect(rows.map((x) => x.key).sort()).toEqual(truth());
        return rows;
      };

      await night();
      // Every row stamped long ago, so a stamp moved by the next night shows.
      await withStore(url, ({ db }) => sql`update group_members set synced_at = 1`.execute(db));
      const [changed, unchanged] = called as [string, string];
      const members = service.members.get(changed)!;
      service.memberScopes.set(members[0]!, 'admin');
      const left = members.splice(1, 1)[0]!;
      members.push(`${changed}-joined`);

      const after = await night();
      expect(after.some((x) => x.key.endsWith(`/${left}/participant`)), 'the member who left is gone').toBe(false);
      // Every membership read that night is stamped, changed or not.
      for (const g of [changed, unchanged]) {
        const rows = after.filter((x) => x.guid === g);
        expect(rows.length, g).toBeGreaterThan(0);
        for (const x of rows) expect(x.syncedAt, `${x.key} stamped`).toBeGreaterThan(1_700_000_000);
      }

      // A promotion alone (same members, same count) is a change too.
      service.memberScopes.set(service.members.get(unchanged)![0]!, 'moderator');
      await night();
    } finally {
      await service.close();
    }
  });
});
