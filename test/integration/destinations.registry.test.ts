import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { openStore } from '../../src/store/connection.js';
import { DatabaseError, destinationOf, DESTINATIONS, displayDatabase, mapDatabaseError, resolveDestination, toDatabaseError } from '../../src/store/destinations/index.js';
import { EXIT, EXIT_FOR_CODE } from '../../src/cli/exit-codes.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { rejection, tempDir } from '../helpers/harness.js';

const postgresUp = (await testDialects()).includes('postgres');

/** The error a function throws (fails the test when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('the destinations registry resolves a `database` setting', () => {
  it.each([
    ['data/callsync.db', 'sqlite'],
    ['./callsync.db', 'sqlite'],
    ['../elsewhere/calls.sqlite', 'sqlite'],
    ['/var/lib/callsync/callsync.db', 'sqlite'],
    [':memory:', 'sqlite'],
    ['postgres://callsync@127.0.0.1:5432/callsync', 'postgres'],
    ['postgresql://callsync:pw@db.internal/callsync', 'postgres'],
    ['POSTGRES://u@/db?host=/run/postgresql', 'postgres'],
  ])('%s is %s', (database, name) => {
    expect(resolveDestination(database).name).toBe(name);
  });

  it.each(['mysql://app:hunter2@db/calls', 'duckdb://calls.duckdb', 'file:///tmp/calls.db', 'http://example.com/x.db'])(
    'refuses %s in one line naming the scheme, never the rest of the URL',
    (database) => {
      const err = thrown(() => resolveDestination(database));
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message.split('\n')).toHaveLength(1);
      expect(message).toMatch(/^database [a-z]+:\/\/…: callsync cannot write to a "[a-z]+" database; give a SQLite file path or a postgres:\/\/ URL/);
      expect(message).not.toContain('hunter2');
      // Shown anywhere, such a setting keeps its secrets too.
      expect(displayDatabase(database)).not.toContain('hunter2');
    },
  );

  it('shows a URL without its password and a path as it is', () => {
    expect(displayDatabase('postgresql://u:hunter2@h/db')).toBe('postgresql://u:***@h/db');
    expect(displayDatabase('data/callsync.db')).toBe('data/callsync.db');
  });

  it('declares what each destination can do', () => {
    const sqlite = resolveDestination('x.db').capabilities;
    const postgres = resolveDestination('postgres://h/db').capabilities;
    expect(sqlite).toMatchObject({ transactionalDdl: true, concurrentWriters: false, serverSideCancel: false, localFile: true, passwordLogin: false, rowid: true, sequences: false });
    expect(postgres).toMatchObject({ transactionalDdl: true, concurrentWriters: true, serverSideCancel: true, localFile: false, passwordLogin: true, rowid: false, sequences: true });
    // Exactly one destination takes file paths (the fallback), and it comes last.
    expect(DESTINATIONS.filter((d) => d.capabilities.localFile).map((d) => d.name)).toEqual(['sqlite']);
    expect(DESTINATIONS.at(-1)!.name).toBe('sqlite');
  });
});

describe('SQLite errors are mapped onto our codes', () => {
  const tmp = tempDir('callsync-destinations-');
  afterAll(() => tmp.cleanup());

  it('a database another connection holds locked is DB_LOCKED', async () => {
    const file = join(tmp.dir, 'locked.db');
    const store = await openStore(file, { busyTimeoutMs: 0 });
    expect(destinationOf(store.db).name).toBe('sqlite');
    // Kysely's migrator reads the adapter's flag: the declared capability must say the same.
    expect(destinationOf(store.db).capabilities.transactionalDdl).toBe(store.db.getExecutor().adapter.supportsTransactionalDdl);
    await migrateToLatest(store.db);
    const holder = new SqliteDatabase(file);
    try {
      holder.exec('begin exclusive');
      const err = await rejection(sql`insert into callsync_settings (key, value) values ('k', 'v')`.execute(store.db));
      expect((err as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
      const mapped = mapDatabaseError(err);
      expect(mapped).toEqual({ code: 'DB_LOCKED', message: 'the database is locked by another process (waited the busy timeout, CALLSYNC_BUSY_TIMEOUT_MS)', hint: 'try again when it is released' });
      expect(mapDatabaseError(err, file)?.code).toBe('DB_LOCKED');
      // What crosses module boundaries: a DatabaseError carrying the native error as its cause.
      const wrapped = toDatabaseError(err);
      expect(wrapped).toBeInstanceOf(DatabaseError);
      expect(wrapped?.code).toBe('DB_LOCKED');
      expect(wrapped?.cause).toBe(err);
      expect(EXIT_FOR_CODE.DB_LOCKED).toBe(EXIT.SYNC_FAILED);
    } finally {
      holder.exec('rollback');
      holder.close();
      await store.close();
    }
  });

  it('a write to a database opened read-only is DB_READ_ONLY', async () => {
    const file = join(tmp.dir, 'read-only.db');
    const writer = await openStore(file);
    await migrateToLatest(writer.db);
    await writer.close();
    const reader = await openStore(file, { readonly: true });
    try {
      const err = await rejection(sql`insert into callsync_settings (key, value) values ('k', 'v')`.execute(reader.db));
      expect((err as { code?: string }).code).toMatch(/^SQLITE_READONLY/);
      const mapped = mapDatabaseError(err, file);
      expect(mapped?.code).toBe('DB_READ_ONLY');
      expect(mapped?.message).toContain(file);
      expect(mapped?.hint).toMatch(/writable/);
      const wrapped = toDatabaseError(err, file);
      expect(wrapped).toBeInstanceOf(DatabaseError);
      expect(wrapped?.code).toBe('DB_READ_ONLY');
      expect(wrapped?.message).toContain(file);
    } finally {
      await reader.close();
    }
  });

  it('an error that is not the database\'s is left alone', () => {
    expect(mapDatabaseError(new Error('boom'))).toBeUndefined();
    expect(mapDatabaseError(Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }))).toBeUndefined();
    // A socket error without a database named may come from HTTP: not claimed by PostgreSQL.
    expect(mapDatabaseError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBeUndefined();
  });
});

describe.runIf(postgresUp)('PostgreSQL errors are mapped onto our codes', () => {
  const tmp = tempDir('callsync-destinations-pg-');
  const dbs = databaseFactory('postgres', tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('a database that does not exist is DB_NOT_FOUND, and openStore says so in one line', async () => {
    const url = new URL(await dbs.fresh('exists'));
    url.pathname = `/cs_missing_${randomBytes(4).toString('hex')}`;
    const client = new pg.Client({ connectionString: url.toString() });
    client.on('error', () => undefined);
    const err = await rejection(client.connect());
    await client.end().catch(() => undefined);
    expect((err as { code?: string }).code).toBe('3D000');
    const mapped = mapDatabaseError(err, url.toString());
    expect(mapped?.code).toBe('DB_NOT_FOUND');
    expect(mapped?.message).toContain(`at ${url.hostname}:${url.port || '5432'}`);
    expect(mapped?.hint).toMatch(/createdb/);

    const opening = await rejection(openStore(url.toString()));
    expect(opening).toBeInstanceOf(ConfigError);
    expect((opening as Error).message).toBe(`${mapped!.message}: ${mapped!.hint}`);
  });

  it('a statement cancelled by statement_timeout is QUERY_TIMEOUT', async () => {
    const store = await openStore(await dbs.fresh('timeout'));
    try {
      expect(destinationOf(store.db).name).toBe('postgres');
      expect(destinationOf(store.db).capabilities.transactionalDdl).toBe(store.db.getExecutor().adapter.supportsTransactionalDdl);
      const err = await rejection(
        store.db.transaction().execute(async (trx) => {
          await sql`set local statement_timeout = 50`.execute(trx);
          await sql`select pg_sleep(30)`.execute(trx);
        }),
      );
      expect((err as { code?: string }).code).toBe('57014');
      expect(mapDatabaseError(err)?.code).toBe('QUERY_TIMEOUT');
    } finally {
      await store.close();
    }
  });

  it('a role over its connection limit is DB_TOO_MANY_CONNECTIONS', async () => {
    const url = new URL(await dbs.fresh('limit'));
    const role = `cs_limited_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    try {
      await admin.query(`create role ${role} login connection limit 0`);
      const limited = new URL(url.toString());
      limited.username = role;
      const client = new pg.Client({ connectionString: limited.toString() });
      client.on('error', () => undefined);
      const err = await rejection(client.connect());
      await client.end().catch(() => undefined);
      expect((err as { code?: string }).code).toBe('53300');
      expect(mapDatabaseError(err, limited.toString())?.code).toBe('DB_TOO_MANY_CONNECTIONS');
    } finally {
      await admin.query(`drop role if exists ${role}`).catch(() => undefined);
      await admin.end();
    }
  });

  it('a server nobody listens on is DB_UNREACHABLE, naming host and port', async () => {
    const url = 'postgres://callsync@127.0.0.1:1/callsync';
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    const err = await rejection(client.connect());
    await client.end().catch(() => undefined);
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
    expect(mapDatabaseError(err, url)).toEqual({
      code: 'DB_UNREACHABLE',
      message: 'cannot reach the PostgreSQL database at 127.0.0.1:1 (connection refused)',
      hint: 'check it is running and the URL in `database` (or --database)',
    });
  });

  it('sets its type parsers on its own pool: int8 is a number there, pg\'s global parsers are untouched', async () => {
    const store = await openStore(await dbs.fresh('types'));
    try {
      const row = (await sql<{ n: unknown; m: unknown }>`select count(*) as n, 1.5::numeric as m`.execute(store.db)).rows[0]!;
      expect(row).toEqual({ n: 1, m: 1.5 });
      expect(pg.types.getTypeParser(pg.types.builtins.INT8, 'text')('42')).toBe('42');
    } finally {
      await store.close();
    }
  });
});
