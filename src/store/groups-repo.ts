import type { Kysely, Transaction } from 'kysely';
import type { Database, NewGroupMemberRow } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

const ROWS_PER_INSERT = 1000;

/** Replaces a group's stored membership with `members` (the current list: who left is gone). */
export async function replaceGroupMembers(trx: Db, appId: string, guid: string, members: readonly NewGroupMemberRow[], now: number): Promise<void> {
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
  await trx.deleteFrom('group_members').where('app_id', '=', appId).where('guid', '=', guid).execute();
  await trx
    .insertInto('synced_groups')
    .values({ app_id: appId, guid, status: 'not_found', members: 0, synced_at: now, not_found_at: now })
    .onConflict((oc) => oc.columns(['app_id', 'guid']).doUpdateSet({ status: 'not_found', members: 0, synced_at: now, not_found_at: now }))
    .execute();
}
