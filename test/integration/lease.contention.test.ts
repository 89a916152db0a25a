import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/connection.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { systemClock } from '../../src/config/clock.js';
import { acquireLease } from '../../src/sync/lease.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { tempDir } from '../helpers/harness.js';

// Lease rows exist on SQLite only: PostgreSQL coordinates through advisory locks and the job engine
// (test/integration/app-lock.postgres.test.ts, workers.job-engine.test.ts).
const dialects = (await testDialects()).filter((d) => d === 'sqlite');

describe.each(dialects)('one lease contended by many takers (%s)', (dialect) => {
  const tmp = tempDir();
  const dbs = databaseFactory(dialect, tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  // Workers that take a lease, hold it briefly and release it, over and over, through separate
  // connections: a taker that loses the race must see who holds it, or find it freed and retry,
  // never fail, and never hold it together with another.
  it('is held by one taker at a time, and losing a race is never an error', async () => {
    const url = await dbs.fresh('lease');
    const stores: Store[] = [];
    for (let i = 0; i < 3; i++) stores.push(await openStore(url));
    try {
      await migrateToLatest(stores[0]!.db);
      let holding = 0;
      let maxHolding = 0;
      let taken = 0;
      let refused = 0;
      const taker = async (store: Store): Promise<void> => {
        for (let i = 0; i < 60; i++) {
          const got = await acquireLease(store.db, 'app:contended/us', systemClock, 60_000);
          if (!got.acquired) {
            refused++;
            expect(got.heldBy.name).toBe('app:contended/us');
            continue;
          }
          taken++;
          maxHolding = Math.max(maxHolding, ++holding);
          await yieldToEventLoop();
          holding--;
          await got.lease.release();
        }
      };
      await Promise.all(stores.flatMap((s) => [taker(s), taker(s)]));
      expect(maxHolding).toBe(1);
      expect(taken).toBeGreaterThan(0);
      expect(taken + refused).toBe(6 * 60);
    } finally {
      for (const s of stores) await s.close();
    }
  });
});
