import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { streamReadOnlyQuery, type QuerySink } from '../../src/store/read-only-query.js';
import { REPO } from '../helpers/cli.js';
import { pgExec, testDialects, type TestDialect } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { syncWith, testSettings } from '../helpers/harness.js';

/**
 * Issue 14: every example query of docs/schema.md runs, through the read-only path `callsync
 * query` uses, on a synced SQLite and a synced PostgreSQL database. A block marked `sql` must run on
 * both; `sql sqlite` / `sql postgres` on that one. The role set-up of "Read-only access for BI
 * tools" is not a query: on PostgreSQL it is run as written to make the role the examples run as
 * (`callsync query` refuses a superuser), which checks it as well.
 */
const SETUP = '## Read-only access for BI tools';
const dialects = await testDialects();

function exampleStatements(dialect: TestDialect): string[] {
  const doc = readFileSync(join(REPO, 'docs/schema.md'), 'utf8');
  const before = doc.slice(0, doc.indexOf(SETUP));
  const blocks = [...before.matchAll(/^```sql([^\n]*)\n([\s\S]*?)^```/gm)];
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  const out: string[] = [];
  for (const [, info, body] of blocks) {
    const tag = info!.trim();
    if (tag !== '' && tag !== dialect) {
      expect(['sqlite', 'postgres']).toContain(tag);
      continue;
    }
    for (const stmt of body!.split(/;\s*$/m)) if (stmt.replace(/--.*$/gm, '').trim()) out.push(stmt.trim());
  }
  return out;
}

/** The set-up block for `role` on `database`, as test/security/query-postgres.test.ts reads it. */
function readerSql(role: string, database: string): string {
  const block = /```sql\n([\s\S]*?)```/.exec(readFileSync(join(REPO, 'docs/schema.md'), 'utf8').split(SETUP)[1]!)?.[1];
  if (!block) throw new Error(`docs/schema.md: no SQL block under "${SETUP}"`);
  return block.replace(/\bcallsync_reader\b/g, role).replace(/DATABASE callsync\b/g, `DATABASE "${database}"`).replace(/FOR ROLE callsync\b/g, 'FOR ROLE postgres');
}


class Rows implements QuerySink {
  count = 0;
  async columns(): Promise<void> {}
  async rows(batch: unknown[][]): Promise<void> {
    this.count += batch.length;
  }
}

describe.each(dialects)('docs/schema.md examples [%s]', (dialect) => {
  test.override({ dialect, simApps: [{ appId: 'app1', calls: 800 }] });
  let db: string;
  // What the examples run as: the file itself, or the documented reader role (unique: roles are cluster-wide).
  let queryAs: string;
  const reader = `cs_docs_reader_${randomBytes(4).toString('hex')}`;
  test.beforeEach(async ({ sim, database }) => {
    db = database;
    expect((await syncWith(testSettings(sim, ['app1'], db))).ok).toBe(true);
    queryAs = db;
    if (dialect === 'postgres') {
      const u = new URL(db);
      await pgExec(db, readerSql(reader, u.pathname.slice(1)));
      u.username = reader;
      queryAs = u.toString();
    }
  });
  // After the fixture dropped the database: a role with privileges on a database cannot be dropped.
  afterAll(async () => {
    if (dialect === 'postgres') {
      const maintenance = new URL(db);
      maintenance.pathname = '/postgres';
      await pgExec(maintenance.toString(), `drop role if exists ${reader}`);
    }
  });

  it('every example runs', async () => {
    const statements = exampleStatements(dialect);
    expect(statements.length).toBeGreaterThanOrEqual(10);
    const failures: string[] = [];
    let withRows = 0;
    for (const stmt of statements) {
      const sink = new Rows();
      try {
        await streamReadOnlyQuery(queryAs, stmt, sink, { limit: 0 });
        if (sink.count > 0) withRows += 1;
      } catch (err) {
        failures.push(`${stmt.split('\n')[0]}\n  -> ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
    // Most examples find something in a synced database (not only an empty result that parsed).
    expect(withRows).toBeGreaterThanOrEqual(statements.length / 2);
  });
});
