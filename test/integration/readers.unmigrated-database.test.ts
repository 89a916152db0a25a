import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { freshDatabase, testDialects } from '../helpers/databases.js';
import { tempDir } from '../helpers/harness.js';

/**
 * A database that is there but that no sync has migrated (a PostgreSQL database created for
 * callsync, an empty file): the reader commands called it "does not exist", sending its owner to
 * look for a database that was there. They now say it has no callsync tables yet, one line, exit 2.
 */
const tmp = tempDir('callsync-unmigrated-');
afterAll(() => tmp.cleanup());

describe.each(await testDialects())('reader commands on a database no sync has migrated (%s)', (dialect) => {
  it('say it has no callsync tables yet and what to run, in one line, exit 2', async () => {
    const db = await freshDatabase(dialect, tmp.dir, 'unmigrated');
    try {
      if (dialect === 'sqlite') writeFileSync(db.url, '');
      for (const args of [['reconcile'], ['export', 'billing', '--month', '2026-10']]) {
        const res = await runCli([...args, '--database', db.url]);
        expect(res.code, args.join(' ')).toBe(2);
        const lines = res.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain('has no callsync tables yet (no sync has run on it); run `callsync sync` first, or pass --database');
        expect(lines[0]).not.toContain('does not exist');
        if (dialect === 'sqlite') expect(lines[0]).toContain(db.url);
      }
    } finally {
      await db.drop();
    }
  });
});
