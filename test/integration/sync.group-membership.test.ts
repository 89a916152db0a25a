import { describe, expect } from 'vitest';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings, withStore } from '../helpers/harness.js';

const dialects = await testDialects();

describe.each(dialects)('group membership of groups that had group calls [%s]', (dialect) => {
  test.override({ dialect, simApps: [{ calls: 3000 }] });

  it('stores the complete current membership, pages past 1000, and records deleted groups', async ({ sim, database: db }) => {
    const r = (await syncWith(testSettings(sim, ['app1'], db))).results[0]!;
    expect(r.status).toBe('ok');
    const truth = sim.truth('app1');
    const deleted = truth.deletedGroups;
    expect(deleted.size).toBeGreaterThan(0);
    const largest = Math.max(...[...truth.groups.values()].map((m) => m.length));
    expect(largest).toBeGreaterThan(1000);
    await withStore(db, async (s) => {
      const rows = await s.db.selectFrom('group_members').select(['guid', 'uid']).where('app_id', '=', 'app1').execute();
      const stored = new Map<string, Set<string>>();
      for (const row of rows) (stored.get(row.guid) ?? stored.set(row.guid, new Set()).get(row.guid)!).add(row.uid);
      for (const [guid, uids] of truth.groups) {
        if (deleted.has(guid)) continue;
        expect(stored.get(guid), guid).toEqual(new Set(uids));
      }
      expect([...stored.keys()].filter((g) => !truth.groups.has(g))).toEqual([]);
      const gone = await s.db.selectFrom('synced_groups').select('guid').where('status', '=', 'not_found').execute();
      expect(new Set(gone.map((g) => g.guid))).toEqual(deleted);
      const attendance = await s.db.selectFrom('group_call_attendance' as never).selectAll().execute();
      expect(attendance.length).toBeGreaterThan(0);
    });
    expect(r.groupsSynced).toBe(truth.groups.size - deleted.size);
    expect(r.groupsNotFound).toBe(deleted.size);
  });
});
