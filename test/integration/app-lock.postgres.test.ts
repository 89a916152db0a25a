import { describe, expect } from 'vitest';
import { appLockKey, heldAdvisoryLocks, withAdvisoryLock } from '../../src/store/app-lock.js';
import { openStore } from '../../src/store/connection.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';

const postgres = (await testDialects()).includes('postgres');

/** The per-app lock of PostgreSQL workers: two stores (two pools, as two processes would have). */
describe.runIf(postgres)('an app lock on PostgreSQL', () => {
  test.override({ dialect: 'postgres' });

  it('is held by one session at a time, seen by others while held, and free once released', async ({ database }) => {
    const a = await openStore(database);
    const b = await openStore(database);
    try {
      const key = appLockKey('app1', 'us');
      const other = appLockKey('app2', 'us');
      const inside = await withAdvisoryLock(a.db, key, async () => {
        // b cannot take it, may take another app's, and sees which one is held.
        expect(await withAdvisoryLock(b.db, key, async () => 'b ran')).toEqual({ locked: false });
        expect(await withAdvisoryLock(b.db, other, async () => 'b ran')).toEqual({ locked: true, value: 'b ran' });
        expect([...(await heldAdvisoryLocks(b.db, [key, other]))]).toEqual([key]);
        return 'a ran';
      });
      expect(inside).toEqual({ locked: true, value: 'a ran' });
      expect((await heldAdvisoryLocks(b.db, [key])).size).toBe(0);
      expect(await withAdvisoryLock(b.db, key, async () => 'b ran')).toEqual({ locked: true, value: 'b ran' });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("is one database's: the same app's lock held on another database of the server is not seen here", async ({ database, newDatabase }) => {
    const here = await openStore(database);
    const there = await openStore(await newDatabase('other'));
    try {
      const key = appLockKey('app1', 'us');
      await withAdvisoryLock(there.db, key, async () => {
        expect((await heldAdvisoryLocks(here.db, [key])).size).toBe(0);
        expect(await withAdvisoryLock(here.db, key, async () => 'taken here')).toEqual({ locked: true, value: 'taken here' });
      });
    } finally {
      await here.close();
      await there.close();
    }
  });

  it('is released when the work inside throws', async ({ database }) => {
    const a = await openStore(database);
    try {
      const key = appLockKey('app1', 'eu');
      await expect(withAdvisoryLock(a.db, key, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      expect((await heldAdvisoryLocks(a.db, [key])).size).toBe(0);
    } finally {
      await a.close();
    }
  });
});
