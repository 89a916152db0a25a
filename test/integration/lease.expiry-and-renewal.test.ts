import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/connection.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { acquireLease, type HeldLease } from '../../src/sync/lease.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { tempDir } from '../helpers/harness.js';
import { TestClock } from '../helpers/test-clock.js';

// Lease rows exist on SQLite only: PostgreSQL coordinates through advisory locks and the job engine
// (test/integration/app-lock.postgres.test.ts, workers.job-engine.test.ts).
const dialects = (await testDialects()).filter((d) => d === 'sqlite');
const TTL = 60_000;
const NAME = 'app:timed/us';

// Lease timing on a test clock over a real database: the lease rows are real, only time is simulated,
// so expiry and renewal are checked at the exact millisecond, with no waiting.
describe.each(dialects)('a lease expires at its TTL unless renewed (%s)', (dialect) => {
  const tmp = tempDir();
  const dbs = databaseFactory(dialect, tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  async function withDb(name: string, fn: (store: Store) => Promise<void>): Promise<void> {
    const store = await openStore(await dbs.fresh(name));
    try {
      await migrateToLatest(store.db);
      await fn(store);
    } finally {
      await store.close();
    }
  }

  async function take(store: Store, clock: TestClock): Promise<HeldLease> {
    const got = await acquireLease(store.db, NAME, clock, TTL);
    if (!got.acquired) throw new Error(`expected to take ${NAME}, held by ${got.heldBy.holder}`);
    return got.lease;
  }

  it('a holder that never renews (its clock stands still) loses the lease exactly at the TTL', async () => {
    await withDb('expiry', async (store) => {
      const start = Date.UTC(2026, 0, 1);
      const stalled = new TestClock(start);
      const other = new TestClock(start);
      const held = await take(store, stalled);
      await other.advance(TTL - 1);
      const early = await acquireLease(store.db, NAME, other, TTL);
      expect(early.acquired).toBe(false);
      if (!early.acquired) expect(early.heldBy.expires_at).toBe(start + TTL);
      await other.advance(1);
      const late = await acquireLease(store.db, NAME, other, TTL);
      expect(late.acquired).toBe(true);
      // The stalled holder's first renewal, a third of the TTL on its own clock, finds the lease gone.
      expect(held.lost.aborted).toBe(false);
      await stalled.advance(TTL / 3);
      expect(held.lost.aborted).toBe(true);
      if (late.acquired) await late.lease.release();
      await held.release();
    });
  });

  it('a running holder renews every third of the TTL, so at its TTL the lease is still its own', async () => {
    await withDb('renewal', async (store) => {
      const start = Date.UTC(2026, 0, 1);
      const clock = new TestClock(start);
      const held = await take(store, clock);
      await clock.advance(TTL / 3 - 1);
      let row = await store.db.selectFrom('leases').selectAll().where('name', '=', NAME).executeTakeFirstOrThrow();
      expect(row.expires_at).toBe(start + TTL);
      await clock.advance(1);
      row = await store.db.selectFrom('leases').selectAll().where('name', '=', NAME).executeTakeFirstOrThrow();
      expect(row.expires_at).toBe(start + TTL / 3 + TTL);
      await clock.advance(TTL - TTL / 3);
      const contender = await acquireLease(store.db, NAME, clock, TTL);
      expect(contender.acquired).toBe(false);
      if (!contender.acquired) expect(contender.heldBy.expires_at).toBe(start + TTL + TTL);
      expect(held.lost.aborted).toBe(false);
      // Released, it renews no more and the lease is free at once.
      await held.release();
      expect(clock.pending).toBe(0);
      const after = await acquireLease(store.db, NAME, clock, TTL);
      expect(after.acquired).toBe(true);
      if (after.acquired) await after.lease.release();
    });
  });
});
