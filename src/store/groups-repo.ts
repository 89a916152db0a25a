import type { Kysely, Transaction } from 'kysely';
import { lockUntilCommit } from './app-lock.js';
import type { Database, NewGroupMemberRow } from './schema.js';

type Db = Transaction<Database>;

/**
 * One group's membership is replaced by one transaction at a time: one appId synced for two regions
 * runs two jobs at once, whose interleaved replacements of the same group failed on a duplicate key
 * on PostgreSQL (probe round 14, C5; the membership itself is not kept per region, a known gap).
 */
const groupLock = (appId: string, guid: string): string => `group:${appId}/${guid}`;

const ROWS_PER_INSERT = 1000;

/** Replaces a group's stored membership with `members` (the current list: who left is gone). */
export async function replaceGroupMembers(trx: Db, appId: string, guid: string, members: readonly NewGroupMemberRow[], now: number): Promise<void> {
  await lockUntilCommit(trx, groupLock(appId, guid));
  await trx.deleteFrom('group_members').where('app_id', '=', appId).where('guid', '=', guid).execute();
  const unique = new Map(members.map((m) => [m.uid, m]));
  const rows = [...unique.values()];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await trx.insertInto('group_members').values(rows.slice(i, i + ROWS_PER_INSERT)).execute();
  }
  await trx
    .insertInto('synced_groups')
    .values({ app_id: appId, guid, status: 'ok', members: rows.length, synced_at: now, not_found_at: null })
    .onConflict((oc) => oc.columns(['app_id', 'guid']).doUpdateSet({ status: 'ok', members: rows.length, synced_at: now, not_found_at: null }))
    .execute();
}

/** Records that a group no longer exists: its membership is emptied, the fact kept. */
export async function markGroupNotFound(trx: Db, appId: string, guid: string, now: number): Promise<void> {
  await lockUntilCommit(trx, groupLock(appId, guid));
  await trx.deleteFrom('group_members').where('app_id', '=', appId).where('guid', '=', guid).execute();
  await trx
    .insertInto('synced_groups')
    .values({ app_id: appId, guid, status: 'not_found', members: 0, synced_at: now, not_found_at: now })
    .onConflict((oc) => oc.columns(['app_id', 'guid']).doUpdateSet({ status: 'not_found', members: 0, synced_at: now, not_found_at: now }))
    .execute();
}

/**
 * Records that a group's members could not be synced (the run is partial): its stored members stay,
 * and the next run syncs the group again whether or not its window lists a call to it (an
 * incremental run listing no call of that group ended ok with the members never stored: probe65 F2).
 */
export async function markGroupFailed(db: Kysely<Database>, appId: string, region: string, guid: string, now: number): Promise<void> {
  await db
    .insertInto('synced_groups')
    .values({ app_id: appId, guid, status: 'failed', members: 0, synced_at: now, not_found_at: null, failed_region: region })
    .onConflict((oc) => oc.columns(['app_id', 'guid']).doUpdateSet({ status: 'failed', failed_region: region }))
    .execute();
}

/**
 * Groups whose last sync in `region` failed (markGroupFailed): synced again by that region's next
 * run. Not another region's: one appId in two regions, the other host answered ERR_GUID_NOT_FOUND,
 * the group's members were removed and never read again, ok (probe66).
 */
export async function failedGroups(db: Kysely<Database>, appId: string, region: string): Promise<string[]> {
  const rows = await db
    .selectFrom('synced_groups')
    .select('guid')
    .where('app_id', '=', appId)
    .where('status', '=', 'failed')
    .where((eb) => eb.or([eb('failed_region', '=', region), eb('failed_region', 'is', null)]))
    .execute();
  return rows.map((r) => r.guid);
}
