import { describe, expect } from 'vitest';
import { openStore } from '../../src/store/connection.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { replaceGroupMembers } from '../../src/store/groups-repo.js';
import type { NewGroupMemberRow } from '../../src/store/schema.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';

const postgres = (await testDialects()).includes('postgres');

const member = (uid: string): NewGroupMemberRow => ({
  app_id: 'app1', guid: 'g1', uid, name: null, avatar: null, link: null, metadata_json: null, status: null, role: null, scope: null,
  joined_at: null, created_at: null, updated_at: null, conversation_id: null, synced_at: 1,
});

/**
 * One appId synced for two regions runs two jobs at once, each replacing a group's members (probe
 * round 14, C5): interleaved on PostgreSQL, the second's delete did not see the first's uncommitted
 * rows and its insert failed on their keys, the run partial. Two stores (two pools, as two jobs).
 */
describe.runIf(postgres)('two transactions replacing one group’s members on PostgreSQL', () => {
  test.override({ dialect: 'postgres' });

  it('run one after the other: the second waits for the first and its members are what is stored', async ({ database }) => {
    const a = await openStore(database);
    const b = await openStore(database);
    try {
      await migrateToLatest(a.db);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let firstWrote!: () => void;
      const wrote = new Promise<void>((resolve) => (firstWrote = resolve));
      const first = a.db.transaction().execute(async (trx) => {
        await replaceGroupMembers(trx, 'app1', 'g1', [member('u1'), member('u2')], 1);
        firstWrote();
        await held;
      });
      await wrote;
      // The second starts while the first is open, and must not fail when the first commits.
      const second = b.db.transaction().execute((trx) => replaceGroupMembers(trx, 'app1', 'g1', [member('u1'), member('u3')], 2));
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      await first;
      await second; // without the lock: rejected with a duplicate key on group_members
      const rows = await a.db.selectFrom('group_members').select('uid').where('app_id', '=', 'app1').where('guid', '=', 'g1').orderBy('uid').execute();
      expect(rows.map((r) => r.uid)).toEqual(['u1', 'u3']);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
