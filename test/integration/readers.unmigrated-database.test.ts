import { statSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { freshDatabase, pgExec, testDialects } from '../helpers/databases.js';
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
      // `query` opens no store before its statement: it said "no such table: calls" (probe round 22).
      // On PostgreSQL it refuses a superuser, such as the test server's admin: a reading role runs it.
      const reader = dialect === 'postgres' ? await readerRole(db.url) : db.url;
      for (const args of [['reconcile'], ['export', 'billing', '--month', '2026-10'], ['query', 'select count(*) from calls']]) {
        const res = await runCli([...args, '--database', args[0] === 'query' ? reader : db.url]);
        expect(res.code, args.join(' ')).toBe(2);
        const lines = res.stderr.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain('has no callsync tables yet (no sync has run on it); run `callsync sync` first, or pass --database');
        expect(lines[0]).not.toMatch(/database \S+ does not exist/);
        if (dialect === 'sqlite') expect(lines[0]).toContain(db.url);
      }
      // A statement that needs no table still runs; the empty file is left as it was.
      const one = await runCli(['query', 'select 1 as x', '--format', 'csv', '--database', reader]);
      expect(one.code, one.stderr).toBe(0);
      expect(one.stdout.trim().split(/\r?\n/)).toEqual(['x', '1']);
      if (dialect === 'sqlite') expect(statSync(db.url).size).toBe(0);
    } finally {
      await db.drop();
    }
  });
});

/** `db` as a role that may read everything and write nothing (roles are server-wide: a unique name, dropped after the test). */
async function readerRole(db: string): Promise<string> {
  const role = `cs_unmigrated_reader_${Math.random().toString(16).slice(2, 10)}`;
  await pgExec(db, `create role ${role} login in role pg_read_all_data`);
  // Dropped over the server's own database: the test's is gone by then.
  const server = new URL(db);
  server.pathname = '/postgres';
  onTestFinished(() => pgExec(server.toString(), `drop role if exists ${role}`));
  const u = new URL(db);
  u.username = role;
  return u.toString();
}
