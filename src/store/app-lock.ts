import { sql, type Kysely, type Transaction } from 'kysely';
import { CallsyncError } from '../config/errors.js';
import { errorMessage } from './destinations/contract.js';
import { destinationOf } from './destinations/index.js';
import type { Database } from './schema.js';

/**
 * PostgreSQL session advisory locks, one per app and region: what keeps two processes (schedule
 * workers, `callsync sync` runs) from syncing one app at once. A session lock is held by a
 * connection, not by a row with an expiry: a process that dies loses its connection and with it the
 * lock, at once, so nothing waits out a TTL and nothing needs renewing.
 *
 * The two-key form (namespace, hashtext(key)) keeps our locks apart from any other user of advisory
 * locks on the same database, and lets pg_locks be searched by the same two numbers.
 */

/** 'call' in ASCII: the first key of every callsync advisory lock. */
const NAMESPACE = 0x63616c6c;

/** The lock's name for an app and region. */
export function appLockKey(appId: string, region: string): string {
  return `app:${appId}/${region}`;
}

/**
 * Holds the named lock until `trx` ends (PostgreSQL; SQLite has one writer at a time). Two
 * transactions replacing the same rows then run one after the other: interleaved, the second's
 * delete did not see the first's uncommitted rows and its insert failed on their keys.
 */
export async function lockUntilCommit(trx: Transaction<Database>, key: string): Promise<void> {
  if (destinationOf(trx).name !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(${NAMESPACE}::int4, hashtext(${key}))`.execute(trx);
}

export type LockedOutcome<T> = { locked: true; value: T } | { locked: false };

/** How often the session holding an app's lock is checked (and kept from idle_session_timeout). */
export const LOCK_HEARTBEAT_MS = 1_000;

/**
 * Runs `fn` while holding the named lock on a connection set aside for it; `{ locked: false }` at
 * once when another session holds it. `fn` writes through the pool as usual: only the lock lives
 * on the set-aside connection, so the pool needs one connection per lock held at a time.
 *
 * That session sits idle while `fn` runs, and the server may end it (pg_terminate_backend, a
 * failover, a proxy dropping idle connections, idle_session_timeout): the lock goes with it, and
 * another process may take it. The session is kept out of idle_session_timeout and looked at every
 * LOCK_HEARTBEAT_MS; when it is gone, `lost` (given to `fn`) aborts with a LEASE_LOST error, so the
 * holder stops writing (probe67 F1: the process died of an unhandled 'error' event instead).
 */
export async function withAdvisoryLock<T>(db: Kysely<Database>, key: string, fn: (lost: AbortSignal) => Promise<T>): Promise<LockedOutcome<T>> {
  return db.connection().execute(async (conn) => {
    const got = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${NAMESPACE}::int4, hashtext(${key})) as ok`.execute(conn);
    if (!got.rows[0]?.ok) return { locked: false };
    const lost = new AbortController();
    const markLost = (err: unknown): void => {
      if (lost.signal.aborted) return;
      lost.abort(new CallsyncError('LEASE_LOST', `lost the lock of ${key}: the database session holding it ended (${errorMessage(err)}); what was written stays, the next run resumes`));
    };
    // PostgreSQL 14+: this session is idle on purpose. Older servers have no such setting.
    await sql`select set_config('idle_session_timeout', '0', false)`.execute(conn).catch(() => undefined);
    let beating = false;
    const heartbeat = setInterval(() => {
      if (beating || lost.signal.aborted) return;
      beating = true;
      sql`select 1`.execute(conn).then(
        () => (beating = false),
        (err: unknown) => markLost(err),
      );
    }, LOCK_HEARTBEAT_MS);
    heartbeat.unref();
    try {
      return { locked: true, value: await fn(lost.signal) };
    } finally {
      clearInterval(heartbeat);
      // A connection already broken has lost the lock with it; the unlock is then moot.
      await sql`select pg_advisory_unlock(${NAMESPACE}::int4, hashtext(${key}))`.execute(conn).catch(() => undefined);
    }
  });
}

/** Like withAdvisoryLock, but waits for the lock instead of giving up (a short critical section). */
export async function withAdvisoryLockWait<T>(db: Kysely<Database>, key: string, fn: () => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${NAMESPACE}::int4, hashtext(${key}))`.execute(conn);
    try {
      return await fn();
    } finally {
      await sql`select pg_advisory_unlock(${NAMESPACE}::int4, hashtext(${key}))`.execute(conn).catch(() => undefined);
    }
  });
}

/**
 * Which of `keys` some session holds now in this database (read from pg_locks: nothing is taken).
 * pg_locks lists the whole server's locks: another database's app of the same name is not ours.
 */
export async function heldAdvisoryLocks(db: Kysely<Database>, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await sql<{ key: string }>`
    select k.key from unnest(${[...keys]}::text[]) as k(key)
    where exists (
      select 1 from pg_locks l
      where l.locktype = 'advisory' and l.granted and l.objsubid = 2
        and l.database = (select oid from pg_database where datname = current_database())
        and l.classid = ${NAMESPACE}::oid and l.objid = hashtext(k.key)::oid
    )`.execute(db);
  return new Set(rows.rows.map((r) => r.key));
}
