import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';

export type TestDialect = 'sqlite' | 'postgres';

/** Admin connection used to create one fresh database per test database (trust auth on this machine). */
const ADMIN_URL = process.env.CALLSYNC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<string | undefined> | undefined;

/** undefined when PostgreSQL answers, else why not. */
function postgresProblem(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3_000 });
    try {
      await client.connect();
      await client.query('select 1');
      return undefined;
    } catch (err) {
      return (err as Error).message;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/**
 * The dialects the integration matrix runs: SQLite always, PostgreSQL when its server answers.
 * In CI (CI=true) an unreachable server is an error, so the matrix cannot silently shrink; locally
 * it is skipped with a loud warning. CALLSYNC_TEST_DIALECTS=sqlite narrows it on purpose.
 */
export async function testDialects(): Promise<TestDialect[]> {
  const wanted = (process.env.CALLSYNC_TEST_DIALECTS ?? 'sqlite,postgres').split(',').map((d) => d.trim()) as TestDialect[];
  if (!wanted.includes('postgres')) return wanted.filter((d) => d === 'sqlite');
  const problem = await postgresProblem();
  if (problem === undefined) return wanted;
  const message = `PostgreSQL at ${ADMIN_URL.replace(/\/\/[^@]*@/, '//')} is not reachable (${problem}): the PostgreSQL half of the test matrix cannot run`;
  if (process.env.CI) throw new Error(`${message}. .ci/run starts the server; see the README.`);
  console.warn(`\n*** WARNING: ${message}; skipping it locally. Start PostgreSQL or set CALLSYNC_TEST_DIALECTS=sqlite. ***\n`);
  return wanted.filter((d) => d === 'sqlite');
}

export interface TestDatabase {
  /** What `database` in the config takes: a file path or a postgres:// URL. */
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database: a new file in `dir`, or a newly created PostgreSQL database. */
export async function freshDatabase(dialect: TestDialect, dir: string, name: string): Promise<TestDatabase> {
  if (dialect === 'sqlite') return { url: join(dir, `${name}.db`), drop: async () => undefined };
  const dbName = `cs_${name.replace(/\W+/g, '_').slice(0, 30)}_${randomBytes(4).toString('hex')}`.toLowerCase();
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${dbName}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      try {
        await c.query(`drop database if exists ${dbName} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Creates fresh databases for one test file and drops them all at the end. */
export function databaseFactory(dialect: TestDialect, dir: string): { fresh(name: string): Promise<string>; dropAll(): Promise<void> } {
  const made: TestDatabase[] = [];
  return {
    async fresh(name) {
      const d = await freshDatabase(dialect, dir, name);
      made.push(d);
      return d.url;
    },
    async dropAll() {
      await Promise.all(made.splice(0).map((d) => d.drop()));
    },
  };
}

/** Runs one statement on a PostgreSQL URL over a connection of its own (set-up: roles, grants). */
export async function pgExec(url: string, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}
