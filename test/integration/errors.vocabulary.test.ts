import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT, EXIT_FOR_CODE } from '../../src/cli/exit-codes.js';
import { CallsyncError, ConfigError, type ErrorCode } from '../../src/config/errors.js';
import type { Simulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/connection.js';
import { toDatabaseError } from '../../src/store/destinations/index.js';
import { MigrationError, migrateToLatest } from '../../src/store/migrate.js';
import { ONE_STATEMENT, READ_ONLY } from '../../src/store/destinations/contract.js';
import { QueryRefusedError, runReadOnlyQuery } from '../../src/store/read-only-query.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { databaseFactory, pgExec, testDialects } from '../helpers/databases.js';
import { KEY_ENV, rejection, startTestSim, tempDir, TEST_KEY, testConfig } from '../helpers/harness.js';

/**
 * Issue 15, point 4: real failures (a locked or read-only SQLite file, PostgreSQL's own errors, a
 * statement `query` refuses) arrive as a CallsyncError with our stable code, and the CLI's exit code
 * is the one EXIT_FOR_CODE gives that code.
 */
const postgresUp = (await testDialects()).includes('postgres');
const ENV = { [KEY_ENV]: TEST_KEY };

function expectCode(err: unknown, code: ErrorCode): CallsyncError {
  expect(err).toBeInstanceOf(CallsyncError);
  expect((err as CallsyncError).code).toBe(code);
  return err as CallsyncError;
}

/** The CLI's exit is the table's for `code`, with one `callsync: ` line and no stack trace. */
function expectExitFor(res: CliResult, code: ErrorCode): void {
  expect(res.code, res.stderr).toBe(EXIT_FOR_CODE[code]);
  expect(res.stderr).not.toMatch(/unexpected error|\n\s+at /);
  expect(res.stderr.trim().split('\n').filter((l) => l.startsWith('callsync: '))).toHaveLength(1);
}

describe('SQLite failures arrive as CallsyncErrors', () => {
  const tmp = tempDir('callsync-errors-');
  afterAll(() => tmp.cleanup());

  it('a path under a plain file: a ConfigError with code DB_CANNOT_OPEN', async () => {
    const file = join(tmp.dir, 'plain.file');
    writeFileSync(file, 'not a folder');
    const err = expectCode(await rejection((async () => openStore(join(file, 'x.db')))()), 'DB_CANNOT_OPEN');
    expect(err).toBeInstanceOf(ConfigError);
  });

  it('query: a second statement is QUERY_INVALID, a write QUERY_NOT_READ_ONLY, an SQL error QUERY_INVALID in SQLite\'s words', async () => {
    const file = join(tmp.dir, 'query.db');
    const store = await openStore(file);
    await migrateToLatest(store.db);
    await store.close();
    expect(expectCode(await rejection(runReadOnlyQuery(file, 'select 1; select 2')), 'QUERY_INVALID').message).toBe(ONE_STATEMENT);
    expect(await rejection(runReadOnlyQuery(file, "insert into callsync_settings (key, value) values ('k', 'v')"))).toBeInstanceOf(QueryRefusedError);
    expectCode(await rejection(runReadOnlyQuery(file, "delete from calls")), 'QUERY_NOT_READ_ONLY');
    expect(expectCode(await rejection(runReadOnlyQuery(file, 'select nope from calls')), 'QUERY_INVALID').message).toMatch(/^query: no such column/);
  });
});

describe.runIf(postgresUp)('PostgreSQL failures arrive as CallsyncErrors', () => {
  const tmp = tempDir('callsync-errors-pg-');
  const dbs = databaseFactory('postgres', tmp.dir);
  const READER = `cs_err_reader_${randomBytes(4).toString('hex')}`;
  let url: string;
  let readerUrl: string;
  beforeAll(async () => {
    url = await dbs.fresh('errors');
    const store = await openStore(url);
    await migrateToLatest(store.db);
    await store.close();
    await pgExec(url, `create role ${READER} login in role pg_read_all_data`);
    const u = new URL(url);
    u.username = READER;
    readerUrl = u.toString();
  });
  afterAll(async () => {
    await pgExec(url, `drop role if exists ${READER}`);
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('a database that does not exist: a ConfigError with code DB_NOT_FOUND', async () => {
    const missing = new URL(url);
    missing.pathname = `/cs_missing_${randomBytes(4).toString('hex')}`;
    const err = expectCode(await rejection(openStore(missing.toString())), 'DB_NOT_FOUND');
    expect(err).toBeInstanceOf(ConfigError);
    expect(EXIT_FOR_CODE[err.code]).toBe(EXIT.USAGE);
  });

  it('query: the statements a cursor refuses are told apart by SQLSTATE, position and routine', async () => {
    const q = (text: string): Promise<unknown> => rejection(runReadOnlyQuery(readerUrl, text, { timeoutSeconds: 5 }));
    // The extended protocol refuses a second statement: a syntax error pointing nowhere.
    expect(expectCode(await q('select 1; select 2'), 'QUERY_INVALID').message).toBe(ONE_STATEMENT);
    // A syntax error at the first word, a command that is not a query; at a writing verb after a WITH.
    expect(expectCode(await q("/* é 😀 */ insert into callsync_settings (key, value) values ('k', 'v')"), 'QUERY_NOT_READ_ONLY').message).toBe(READ_ONLY);
    expectCode(await q("with a as (select 1) insert into callsync_settings (key, value) values ('k', 'v')"), 'QUERY_NOT_READ_ONLY');
    expectCode(await q('show statement_timeout'), 'QUERY_NOT_READ_ONLY');
    // The DECLARE's own refusal (FEATURE_NOT_SUPPORTED from transformDeclareCursorStmt): a data-modifying WITH.
    expectCode(await q('with a as (delete from calls returning 1) select * from a'), 'QUERY_NOT_READ_ONLY');
    // A FEATURE_NOT_SUPPORTED of the query itself, and a typo, are the user's SQL errors, in the server's words.
    expect(expectCode(await q('select 1 union select 2 for update'), 'QUERY_INVALID').message).toMatch(/^query: FOR UPDATE is not allowed/);
    expect(expectCode(await q('selec 1'), 'QUERY_INVALID').message).toBe('query: syntax error at or near "selec"');
    // A word that is a verb but not where the error points is not taken for a write.
    expect(expectCode(await q('select insert from calls'), 'QUERY_INVALID').message).not.toBe(READ_ONLY);
  });

  it('query: statement_timeout is QUERY_TIMEOUT', async () => {
    const err = expectCode(await rejection(runReadOnlyQuery(readerUrl, 'select pg_sleep(30)', { timeoutSeconds: 0.2 })), 'QUERY_TIMEOUT');
    expect(err.message).toBe('query: cancelled by the server after 0.2 s (statement_timeout); narrow the query, or raise queryTimeoutSeconds in the config');
  });

  it('a session that may not write: a migration fails with MIGRATION_FAILED, a write maps to DB_READ_ONLY', async () => {
    const ro = await dbs.fresh('ro-migrate');
    await pgExec(ro, `alter database "${new URL(ro).pathname.slice(1)}" set default_transaction_read_only = on`);
    const store = await openStore(ro);
    try {
      const err = expectCode(await rejection(migrateToLatest(store.db)), 'MIGRATION_FAILED');
      expect(err).toBeInstanceOf(MigrationError);
      expectCode(toDatabaseError(await rejection(sql`create table t (a int)`.execute(store.db))), 'DB_READ_ONLY');
    } finally {
      await store.close();
    }
  });
});

describe('the CLI exits with the code the table gives', () => {
  const tmp = tempDir('callsync-errors-cli-');
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startTestSim([{ calls: 20 }]);
  });
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('QUERY_NOT_READ_ONLY and QUERY_INVALID: exit 2', async () => {
    const db = join(tmp.dir, 'q.db');
    expect((await runCli(['migrate', '--database', db])).code).toBe(0);
    expectExitFor(await runCli(['query', '--database', db, 'delete from calls']), 'QUERY_NOT_READ_ONLY');
    const two = await runCli(['query', '--database', db, 'select 1; select 2']);
    expectExitFor(two, 'QUERY_INVALID');
    expect(two.stderr.trim()).toBe(`callsync: ${ONE_STATEMENT}`);
  });

  it('DB_LOCKED: the sync cannot take its lease past the busy timeout, exit 1 with the message and hint on one line', async () => {
    const db = join(tmp.dir, 'locked.db');
    const cfg = join(tmp.dir, 'locked.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
    expect((await runCli(['migrate', '--config', cfg], ENV)).code).toBe(0);
    const holder = new SqliteDatabase(db);
    holder.exec('begin exclusive');
    try {
      const res = await runCli(['sync', '--config', cfg], { ...ENV, CALLSYNC_BUSY_TIMEOUT_MS: '200' });
      expectExitFor(res, 'DB_LOCKED');
      expect(res.stderr).toContain('callsync: the database is locked by another process (waited the busy timeout, CALLSYNC_BUSY_TIMEOUT_MS); try again when it is released');
    } finally {
      holder.exec('rollback');
      holder.close();
    }
  });

  it.runIf(postgresUp)('DB_READ_ONLY: a sync against a read-only PostgreSQL database ends in one line and exit 2, not an internal error', async () => {
    const dbs = databaseFactory('postgres', tmp.dir);
    try {
      const ro = await dbs.fresh('ro-sync');
      expect((await runCli(['migrate', '--database', ro])).code).toBe(0);
      await pgExec(ro, `alter database "${new URL(ro).pathname.slice(1)}" set default_transaction_read_only = on`);
      const cfg = join(tmp.dir, 'ro.json');
      writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], ro)));
      const res = await runCli(['sync', '--config', cfg], ENV);
      expectExitFor(res, 'DB_READ_ONLY');
      expect(res.stderr).toMatch(/^callsync: the PostgreSQL session (at .* )?is read-only \(.*\); connect as a role that may write/m);
    } finally {
      await dbs.dropAll();
    }
  });
});
