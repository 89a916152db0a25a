import type { Kysely } from 'kysely';
import type { Database, LeasesTable } from './schema.js';

export type LeaseHolder = Pick<LeasesTable, 'holder' | 'pid' | 'host'>;

/**
 * Takes the named lease for `ttlMs` if it is free, expired, or already ours. One conditional upsert
 * (atomic in SQLite and PostgreSQL alike), so two processes racing for it cannot both win.
 * Returns the lease as it stands afterwards: ours when `holder` matches.
 */
export async function tryAcquireLease(db: Kysely<Database>, name: string, me: LeaseHolder, nowMs: number, ttlMs: number): Promise<LeasesTable> {
  const nowSec = Math.floor(nowMs / 1000);
  await db
    .insertInto('leases')
    .values({ name, ...me, acquired_at: nowSec, renewed_at: nowSec, expires_at: nowMs + ttlMs })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet((eb) => ({
          holder: eb.ref('excluded.holder'),
          pid: eb.ref('excluded.pid'),
          host: eb.ref('excluded.host'),
          acquired_at: eb.ref('excluded.acquired_at'),
          renewed_at: eb.ref('excluded.renewed_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where((eb) => eb.or([eb('leases.expires_at', '<=', nowMs), eb('leases.holder', '=', me.holder)])),
    )
    .execute();
  return db.selectFrom('leases').selectAll().where('name', '=', name).executeTakeFirstOrThrow();
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

/** Takes the lease from a holder known to be dead; a no-op if it changed hands meanwhile. */
export async function takeOverLease(db: Kysely<Database>, name: string, deadHolder: string, me: LeaseHolder, nowMs: number, ttlMs: number): Promise<LeasesTable> {
  const nowSec = Math.floor(nowMs / 1000);
  await db
    .updateTable('leases')
    .set({ ...me, acquired_at: nowSec, renewed_at: nowSec, expires_at: nowMs + ttlMs })
    .where('name', '=', name)
    .where('holder', '=', deadHolder)
    .execute();
  return db.selectFrom('leases').selectAll().where('name', '=', name).executeTakeFirstOrThrow();
}
