import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.js';
import { collect, REPO, runCli, spawnCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { KEY_ENV, tempDir, withStore } from '../helpers/harness.js';

/**
 * Issue 13, point 1: `callsync query` on PostgreSQL only ever reads. The real CLI runs against a
 * real server: as a superuser (refused), as a role that may write (its writes refused all the same)
 * and as the reader role docs/schema.md tells readers to create (reads, never writes).
 */
const postgres = (await testDialects()).includes('postgres');
const ROWS = 10_500;

/** The SQL of docs/schema.md's "Read-only access for BI tools", for this role and database. */
function readerSql(role: string, database: string): string {
  const doc = readFileSync(join(REPO, 'docs/schema.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Read-only access for BI tools'));
  const block = /```sql\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('docs/schema.md: no SQL block under "Read-only access for BI tools"');
  return block
    .replace(/\bcallsync_reader\b/g, role)
    .replace(/DATABASE callsync\b/g, `DATABASE "${database}"`)
    .replace(/FOR ROLE callsync\b/g, 'FOR ROLE postgres');
}

const asRole = (url: string, role: string): string => {
  const u = new URL(url);
  u.username = role;
  return u.toString();
};

describe.runIf(postgres)('query on PostgreSQL only reads', () => {
  const tmp = tempDir();
  const dbs = databaseFactory('postgres', tmp.dir);
  const tag = randomBytes(4).toString('hex');
  // Roles are cluster-wide: unique names, dropped at the end.
  const READER = `cs_reader_${tag}`;
  const WRITER = `cs_writer_${tag}`;
  const FILES = `cs_files_${tag}`;
  let admin: string;
  let reader: string;
  let writer: string;
  let dbName: string;
  const cfg = join(tmp.dir, 'reader.config.json');

  async function sqlAs<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<T>(text)).rows;
    } finally {
      await c.end();
    }
  }

  beforeAll(async () => {
    admin = await dbs.fresh('query_ro');
    dbName = new URL(admin).pathname.slice(1);
    await withStore(admin, async (s) => void (await migrateToLatest(s.db)));
    await sqlAs(admin, `create table numbers (n int primary key); insert into numbers select generate_series(1, ${ROWS})`);
    await sqlAs(admin, readerSql(READER, dbName));
    await sqlAs(
      admin,
      `create role ${WRITER} login; grant usage, create on schema public to ${WRITER};
       grant select, insert, update, delete on all tables in schema public to ${WRITER};
       create role ${FILES} login in role pg_read_server_files; grant select on all tables in schema public to ${FILES}`,
    );
    reader = asRole(admin, READER);
    writer = asRole(admin, WRITER);
    writeFileSync(cfg, JSON.stringify({ database: reader, queryTimeoutSeconds: 1, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV }] }));
  });
  afterAll(async () => {
    // Dropping the database (with force) ends every session and takes its grants with it.
    await dbs.dropAll();
    const maintenance = new URL(admin);
    maintenance.pathname = '/postgres';
    await sqlAs(maintenance.toString(), `drop role if exists ${READER}; drop role if exists ${WRITER}; drop role if exists ${FILES}`);
    tmp.cleanup();
  });

  it('refuses a second statement as a whole: `select 1; commit; create table` creates nothing, even for a role allowed to create', async () => {
    const two = ['select 1; commit; create table t(x int)', 'select 1; create table t(x int)'];
    for (const r of await Promise.all(two.map((statement) => runCli(['query', '--database', writer, statement])))) {
      expect([r.code, r.stdout, r.stderr.trim()]).toEqual([2, '', 'callsync: query: give one SQL statement at a time']);
    }
    const writes = ['create table t(x int)', 'delete from numbers', 'insert into numbers values (0)', 'with d as (delete from numbers returning n) select * from d', 'update numbers set n = n', 'truncate numbers', 'set default_transaction_read_only = off'];
    for (const r of await Promise.all(writes.map((statement) => runCli(['query', '--database', writer, statement])))) {
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toMatch(/query is read-only/);
    }
    const tables = await sqlAs<{ n: number }>(admin, `select count(*)::int as n from pg_tables where schemaname = 'public' and tablename = 't'`);
    expect(tables[0]!.n).toBe(0);
    expect((await sqlAs<{ n: number }>(admin, 'select count(*)::int as n from numbers'))[0]!.n).toBe(ROWS);
  });

  it('refuses a superuser, and a role that reaches the server files, with one line saying how to make a reader', async () => {
    const cases = [[admin, /"postgres", a superuser/], [asRole(admin, FILES), /a member of pg_read_server_files/]] as const;
    const results = await Promise.all(cases.map(([url]) => runCli(['query', '--database', url, 'select 1 as one'])));
    for (const [i, [, why]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(why);
      expect(lines[0]).toContain("CREATE ROLE callsync_reader LOGIN PASSWORD '…' IN ROLE pg_read_all_data");
      expect(lines[0]).toContain('Read-only access for BI tools');
    }
  });

  it('the reader role made as docs/schema.md says reads tables and views, in a read-only session, and cannot write', async () => {
    const r = await runCli(['query', '-c', cfg, '--format', 'csv', 'select count(*) as n, max(n) as top from numbers']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(parse(r.stdout, { columns: true })).toEqual([{ n: String(ROWS), top: String(ROWS) }]);
    const view = await runCli(['query', '-c', cfg, '--format', 'json', 'select count(*) as n from call_reconciliation']);
    expect([view.code, view.stderr]).toEqual([0, '']);
    expect(JSON.parse(view.stdout)).toEqual([{ n: 0 }]);
    const session = await runCli(['query', '-c', cfg, '--format', 'json', "select current_setting('default_transaction_read_only') as session_ro, current_setting('transaction_read_only') as tx_ro, current_setting('statement_timeout') as timeout"]);
    expect(JSON.parse(session.stdout)).toEqual([{ session_ro: 'on', tx_ro: 'on', timeout: '1s' }]);
    const writes = ['delete from numbers', "insert into callsync_settings values ('x', 'y')", 'drop table numbers', 'create table t2(x int)'];
    for (const w of await Promise.all(writes.map((statement) => runCli(['query', '-c', cfg, statement])))) {
      expect(w.code).toBe(2);
      expect(w.stderr).toMatch(/query is read-only/);
    }
    // The role itself, outside callsync, may not write either (SELECT only, and the session default).
    const direct = new pg.Client({ connectionString: reader });
    await direct.connect();
    try {
      await expect(direct.query('delete from numbers')).rejects.toThrow(/read-only transaction/);
      await direct.query('set default_transaction_read_only = off');
      await expect(direct.query('delete from numbers')).rejects.toThrow(/permission denied/);
      await expect(direct.query('create table t3(x int)')).rejects.toThrow(/permission denied/);
    } finally {
      await direct.end();
    }
    expect((await sqlAs<{ n: number }>(admin, 'select count(*)::int as n from numbers'))[0]!.n).toBe(ROWS);
  });

  it('integers beyond a double are printed exactly in every format (9007199254740993 came out as …992)', async () => {
    const statement = "select 9007199254740993::int8 as big, (-9223372036854775808)::int8 as least, 123456789012345678901234567890::numeric as wide, 7::int8 as small, 2.5::numeric as half";
    const out = await Promise.all(['table', 'csv', 'json'].map((format) => runCli(['query', '-c', cfg, '--format', format, statement])));
    for (const r of out) expect([r.code, r.stderr]).toEqual([0, '']);
    expect(out[0]!.stdout).toMatch(/│ 9007199254740993 │ -9223372036854775808 │ 123456789012345678901234567890 │ 7 +│ 2\.5000 │/);
    expect(out[1]!.stdout).toBe('big,least,wide,small,half\r\n9007199254740993,-9223372036854775808,123456789012345678901234567890,7,2.5\r\n');
    expect(out[2]!.stdout.replace(/\s+/g, '')).toBe('[{"big":9007199254740993,"least":-9223372036854775808,"wide":123456789012345678901234567890,"small":7,"half":2.5}]');
  });

  it('numerics, json, NaN and arrays keep their exact value in every format (probe round 22: …994, [object Object], null)', async () => {
    const statement = `select 9007199254740993.5::numeric as frac, 2.50::numeric as half, 'NaN'::numeric as nan, '-Infinity'::float8 as neg_inf,
      '{"a": 9007199254740993, "b": [1.5, null]}'::jsonb as doc, array[9007199254740993, null]::int8[] as ids, 0.1::float8 as tenth`;
    const out = await Promise.all(['table', 'csv', 'json'].map((format) => runCli(['query', '-c', cfg, '--format', format, statement])));
    for (const r of out) expect([r.code, r.stderr]).toEqual([0, '']);
    expect(out[0]!.stdout).toContain('│ 9007199254740993.5 │ 2.5000 │ NaN │ -Infinity │ {"a": 9007199254740993, "b": [1.5, null]} │ [9007199254740993,null] │ 0.1000 │');
    expect(out[1]!.stdout).toBe('frac,half,nan,neg_inf,doc,ids,tenth\r\n9007199254740993.5,2.5,NaN,-Infinity,"{""a"": 9007199254740993, ""b"": [1.5, null]}","[9007199254740993,null]",0.1\r\n');
    expect(out[2]!.stdout.replace(/\s+/g, '')).toBe('[{"frac":9007199254740993.5,"half":2.5,"nan":"NaN","neg_inf":"-Infinity","doc":{"a":9007199254740993,"b":[1.5,null]},"ids":[9007199254740993,null],"tenth":0.1}]');
  });

  it('--limit caps the rows (10,000 by default) and says so on stderr; 0 streams them all', async () => {
    const rowsOf = (csv: string): string[][] => (parse(csv) as string[][]).slice(1);
    const dflt = await runCli(['query', '-c', cfg, '--format', 'csv', 'select n from numbers order by n']);
    expect(dflt.code).toBe(0);
    const got = rowsOf(dflt.stdout);
    expect(got).toHaveLength(10_000);
    expect(got.at(-1)).toEqual(['10000']);
    expect(dflt.stderr.trim()).toBe('callsync: query: stopped at --limit 10000 rows; the result has more (raise --limit, or 0 for no limit)');

    const small = await runCli(['query', '-c', cfg, '--format', 'json', '--limit', '25', 'select n from numbers order by n']);
    expect((JSON.parse(small.stdout) as unknown[]).length).toBe(25);
    expect(small.stderr).toMatch(/stopped at --limit 25 rows/);

    const exact = await runCli(['query', '-c', cfg, '--format', 'csv', '--limit', String(ROWS), 'select n from numbers']);
    expect([rowsOf(exact.stdout).length, exact.stderr]).toEqual([ROWS, '']);
    const all = await runCli(['query', '-c', cfg, '--format', 'json', '--limit', '0', 'select n from numbers order by n']);
    const parsed = JSON.parse(all.stdout) as { n: number }[];
    expect([parsed.length, parsed[0], parsed.at(-1), all.stderr]).toEqual([ROWS, { n: 1 }, { n: ROWS }, '']);

    const table = await runCli(['query', '-c', cfg, '--limit', '3', 'select n from numbers order by n']);
    expect(table.stdout).toContain('(3 rows)');
    const bad = await runCli(['query', '-c', cfg, '--limit', 'lots', 'select 1']);
    expect([bad.code, bad.stderr.trim()]).toEqual([2, 'callsync: --limit "lots": expected a whole number of rows (0: no limit)']);
  });

  it('statement_timeout (queryTimeoutSeconds) cancels a long statement on the server', async () => {
    const started = Date.now();
    const r = await runCli(['query', '-c', cfg, 'select pg_sleep(30)']);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('callsync: query: cancelled by the server after 1 s (statement_timeout); narrow the query, or raise queryTimeoutSeconds in the config');
    const left = await sqlAs(admin, `select pid from pg_stat_activity where usename = '${READER}' and query like '%pg_sleep%' and state = 'active'`);
    expect(left).toEqual([]);
  });

  it('Ctrl-C cancels the statement on the server and exits 5', async () => {
    const slow = join(tmp.dir, 'slow.config.json');
    writeFileSync(slow, JSON.stringify({ database: reader, queryTimeoutSeconds: 600, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV }] }));
    const child = spawnCli(['query', '-c', slow, 'select pg_sleep(120)']);
    const done = collect(child);
    const running = (): Promise<unknown[]> => sqlAs(admin, `select pid from pg_stat_activity where usename = '${READER}' and state = 'active' and query like 'fetch%'`);
    const deadline = Date.now() + 20_000;
    while ((await running()).length === 0) {
      if (Date.now() > deadline) throw new Error('the query never started on the server');
      await new Promise((r) => setTimeout(r, 100));
    }
    const sent = Date.now();
    child.kill('SIGINT');
    const r = await done;
    expect(Date.now() - sent).toBeLessThan(5_000);
    expect(r.code).toBe(5);
    expect(r.stderr.trim()).toBe('callsync: query: interrupted; the statement was cancelled on the server');
    // The server statement is gone too, not only the client.
    const gone = Date.now() + 5_000;
    while ((await running()).length > 0 && Date.now() < gone) await new Promise((res) => setTimeout(res, 100));
    expect(await running()).toEqual([]);
  });
});

describe('query --limit on SQLite', () => {
  const tmp = tempDir();
  const db = join(tmp.dir, 'n.db');
  beforeAll(() => {
    const native = new SqliteDatabase(db);
    native.exec('create table numbers (n integer primary key)');
    const ins = native.prepare('insert into numbers values (?)');
    native.transaction(() => {
      for (let i = 1; i <= 2_500; i++) ins.run(i);
    })();
    native.close();
  });
  afterAll(() => tmp.cleanup());

  it('integers beyond a double are printed exactly in every format (9007199254740993 came out as …992)', async () => {
    const statement = "select 9007199254740993 as big, -9223372036854775808 as least, 7 as small, 2.5 as half, '9007199254740993' as text";
    const out = await Promise.all(['table', 'csv', 'json'].map((format) => runCli(['query', '--database', db, '--format', format, statement])));
    for (const r of out) expect([r.code, r.stderr]).toEqual([0, '']);
    expect(out[0]!.stdout).toMatch(/│ 9007199254740993 │ -9223372036854775808 │ 7 +│ 2\.5000 │ 9007199254740993 │/);
    expect(out[1]!.stdout).toBe('big,least,small,half,text\r\n9007199254740993,-9223372036854775808,7,2.5,9007199254740993\r\n');
    // A number in JSON, and the text column still a string.
    expect(out[2]!.stdout.replace(/\s+/g, '')).toBe('[{"big":9007199254740993,"least":-9223372036854775808,"small":7,"half":2.5,"text":"9007199254740993"}]');
  });

  it('a REAL past 2^53 is written with its exponent, not as digits that look exact', async () => {
    const statement = 'select 9223372036854775807 + 1 as real_big, 9223372036854775807 as int_big';
    const out = await Promise.all(['csv', 'json'].map((format) => runCli(['query', '--database', db, '--format', format, statement])));
    expect(out[0]!.stdout).toBe('real_big,int_big\r\n9.223372036854776e+18,9223372036854775807\r\n');
    expect(out[1]!.stdout.replace(/\s+/g, '')).toBe('[{"real_big":9.223372036854776e+18,"int_big":9223372036854775807}]');
  });

  it('caps the rows and says so on stderr; a smaller result is whole and silent', async () => {
    const capped = await runCli(['query', '--database', db, '--format', 'csv', '--limit', '1200', 'select n from numbers order by n']);
    expect(capped.code).toBe(0);
    expect((parse(capped.stdout) as string[][]).length).toBe(1 + 1200);
    expect(capped.stderr.trim()).toBe('callsync: query: stopped at --limit 1200 rows; the result has more (raise --limit, or 0 for no limit)');
    const whole = await runCli(['query', '--database', db, '--format', 'json', 'select n from numbers order by n']);
    expect([(JSON.parse(whole.stdout) as unknown[]).length, whole.stderr]).toEqual([2_500, '']);
  });
});
