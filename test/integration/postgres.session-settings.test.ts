import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/connection.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { tempDir } from '../helpers/harness.js';

const postgres = (await testDialects()).includes('postgres');

describe.runIf(postgres)('PostgreSQL sessions', () => {
  const tmp = tempDir();
  const dbs = databaseFactory('postgres', tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  // Without it, foreign-key checks keep the plan made while `calls` was empty and scan the table
  // for every participant row: a first sync slows down quadratically (see src/store/postgres.ts).
  it('plan every statement for the tables as they are, on every pooled connection', async () => {
    const store = await openStore(await dbs.fresh('settings'));
    try {
      // Three transactions open at once hold three different pooled connections.
      let open = 0;
      let release: () => void = () => undefined;
      const allOpen = new Promise<void>((r) => (release = r));
      const modes = await Promise.all(
        [1, 2, 3].map(() =>
          store.db.transaction().execute(async (trx) => {
            const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
            if (++open === 3) release();
            await allOpen;
            const mode = (await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(trx)).rows[0]!.plan_cache_mode;
            return { pid, mode };
          }),
        ),
      );
      expect(new Set(modes.map((m) => m.pid)).size).toBe(3);
      for (const m of modes) expect(m.mode).toBe('force_custom_plan');
    } finally {
      await store.close();
    }
  });
});
