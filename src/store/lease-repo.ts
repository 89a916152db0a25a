import type { Kysely } from 'kysely';
import type { Database, LeasesTable } from './schema.js';

export type LeaseHolder = Pick<LeasesTable, 'holder' | 'pid' | 'host'>;

/**
 * Takes the named lease for `ttlMs` if it is free, expired, or already ours, and returns the lease as
 * it stands afterwards: ours when `holder` matches. One statement, atomic in SQLite and PostgreSQL
 * alike: two processes racing for it cannot both win, and the answer names the holder at that
 * instant (a separate read could find the row already released by a holder that just finished).
 */
export async function tryAcquireLease(db: Kysely<Database>, name: string, me: LeaseHolder, nowMs: number, ttlMs: number): Promise<LeasesTable> {
  const nowSec = Math.floor(nowMs / 1000);
  return db
    .insertInto('leases')
    .values({ name, ...me, acquired_at: nowSec, renewed_at: nowSec, expires_at: nowMs + ttlMs })
    .onConflict((oc) =>
      oc.column('name').doUpdateSet((eb) => {
        // A live lease of another holder is written back unchanged, so that RETURNING reports it.
        const ours = eb.or([eb('leases.expires_at', '<=', nowMs), eb('leases.holder', '=', me.holder)]);
        const take = <C extends 'holder' | 'pid' | 'host' | 'acquired_at' | 'renewed_at' | 'expires_at'>(c: C) =>
          eb.case().when(ours).then(eb.ref(`excluded.${c}`)).else(eb.ref(`leases.${c}`)).end();
        return {
          holder: take('holder'),
          pid: take('pid'),
          host: take('host'),
          acquired_at: take('acquired_at'),
          renewed_at: take('renewed_at'),
          expires_at: take('expires_at'),
        };
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Extends our lease; false when it is no longer ours (it expired and another process took it). */
export async function renewLease(db: Kysely<Database>, name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean> {
  const r = await db
    .updateTable('leases')
    .set({ renewed_at: Math.floor(nowMs / 1000), expires_at: nowMs + ttlMs })
    .where('name', '=', name)
    .where('holder', '=', holder)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function releaseLease(db: Kysely<Database>, name: string, holder: string): Promise<void> {
  await db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
}

/** Takes the lease from a holder known to be dead; undefined when it changed hands meanwhile. */
export async function takeOverLease(db: Kysely<Database>, name: string, deadHolder: string, me: LeaseHolder, nowMs: number, ttlMs: number): Promise<LeasesTable | undefined> {
  const nowSec = Math.floor(nowMs / 1000);
  return db
    .updateTable('leases')
    .set({ ...me, acquired_at: nowSec, renewed_at: nowSec, expires_at: nowMs + ttlMs })
    .where('name', '=', name)
    .where('holder', '=', deadHolder)
    .returningAll()
    .executeTakeFirst();
}
