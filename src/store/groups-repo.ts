import type { Kysely, Transaction } from 'kysely';
import { lockUntilCommit } from './app-lock.js';
import { insertRows, placeholderRow } from './compiled-statements.js';
import type { Database, NewGroupMemberRow } from './schema.js';

type Db = Transaction<Database>;

/**
 * One group's membership is replaced by one transaction at a time: one appId synced for two regions
 * runs two jobs at once, whose interleaved replacements of the same group failed on a duplicate key
 * on PostgreSQL (probe round 14, C5; the membership itself is not kept per region, a known gap).
 */
const groupLock = (appId: string, guid: string): string => `group:${appId}/${guid}`;

/** Rows per insert statement (a power of two, as statementSizes needs): 1,024 × 15 parameters stay far below both databases' limits. */
const MAX_MEMBER_ROWS = 1024;

/** Column order of the statements below; the check fails to compile when the table gains a column. */
const MEMBER_COLUMNS = [
  'app_id', 'guid', 'uid', 'name', 'avatar', 'link', 'metadata_json', 'status', 'role', 'scope',
  'joined_at', 'created_at', 'updated_at', 'conversation_id', 'synced_at',
] as const satisfies readonly (keyof NewGroupMemberRow)[];
const everyColumn: Exclude<keyof NewGroupMemberRow, (typeof MEMBER_COLUMNS)[number]> extends never ? true : never = true;
void everyColumn;

/** The columns a listing states (all but the keys and synced_at): what tells a membership changed. */
const STATED = MEMBER_COLUMNS.filter((c) => c !== 'app_id' && c !== 'guid' && c !== 'synced_at');

/** One stored value and one listed are the same (PostgreSQL's bigint arrives as text). */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (a !== null && a !== undefined && b !== null && b !== undefined && String(a) === String(b));
}

/** Whether the stored rows are exactly `rows` (same members, every stated column the same). */
function sameMembership(stored: readonly Record<string, unknown>[], rows: readonly NewGroupMemberRow[]): boolean {
  if (stored.length !== rows.length) return false;
  const byUid = new Map(stored.map((r) => [String(r.uid), r]));
  return rows.every((row) => {
    const s = byUid.get(row.uid);
    return s !== undefined && STATED.every((c) => sameValue(s[c], row[c] ?? null));
  });
}

/**
 * Replaces a group's stored membership with `members` (the current list: who left is gone). A
 * membership read again unchanged (most groups on most nights) only has its synced_at moved: deleting
 * and inserting every member again was most of a quiet nightly run's CPU (issue 16, the quiet
 * re-run: 4,921 members of 38 groups rewritten each run).
 */
export async function replaceGroupMembers(trx: Db, appId: string, guid: string, members: readonly NewGroupMemberRow[], now: number): Promise<void> {
  await lockUntilCommit(trx, groupLock(appId, guid));
  const unique = new Map(members.map((m) => [m.uid, m]));
  const rows = [...unique.values()];
  const stored = await trx.selectFrom('group_members').select(STATED).where('app_id', '=', appId).where('guid', '=', guid).execute();
  if (sameMembership(stored, rows)) {
    // The time the listing read them, as an insert of the same rows would have stored.
    const readAt = rows.reduce((t, r) => Math.max(t, r.synced_at), 0);
    if (rows.length > 0) await trx.updateTable('group_members').set({ synced_at: readAt }).where('app_id', '=', appId).where('guid', '=', guid).execute();
  } else {
    await trx.deleteFrom('group_members').where('app_id', '=', appId).where('guid', '=', guid).execute();
    await insertRows(trx, 'insert-members', rows, MEMBER_COLUMNS, MAX_MEMBER_ROWS, (n) =>
      trx.insertInto('group_members').values(new Array<NewGroupMemberRow>(n).fill(placeholderRow(MEMBER_COLUMNS) as unknown as NewGroupMemberRow)).compile(),
    );
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
