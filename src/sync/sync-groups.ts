import type { Kysely } from 'kysely';
import pLimit from 'p-limit';
import type { ChatApi } from '../source/chat-api.js';
import { MAX_MEMBERS_PER_PAGE } from '../source/chat-api.js';
import { ApiError } from '../source/errors.js';
import { ListingError } from '../source/paginate-calls.js';
import { ApiGroupMemberSchema, describeZodError } from '../source/schemas.js';
import { markGroupNotFound, replaceGroupMembers } from '../store/groups-repo.js';
import { insertRejected } from '../store/runs-repo.js';
import type { Database, NewGroupMemberRow, NewRejectedRow } from '../store/schema.js';
import { fingerprint } from '../transform/call-rows.js';

export interface GroupSyncResult {
  groups: number;
  members: number;
  notFound: number;
  rejected: number;
  /** Groups whose members could not be synced, with the reason; retried on the next run. */
  failed: string[];
}

/** Groups whose members are fetched at once; each group's pages are read in order. */
const GROUP_CONCURRENCY = 4;
/** A group larger than this many pages is an error in the listing, not a group. */
const MAX_MEMBER_PAGES = 10_000;

function memberRow(appId: string, guid: string, m: ReturnType<typeof ApiGroupMemberSchema.parse>, now: number): NewGroupMemberRow {
  return {
    app_id: appId,
    guid,
    uid: m.uid,
    name: m.name ?? null,
    avatar: m.avatar ?? null,
    link: m.link ?? null,
    metadata_json: m.metadata === undefined ? null : JSON.stringify(m.metadata),
    status: m.status ?? null,
    role: m.role ?? null,
    scope: m.scope ?? null,
    joined_at: m.joinedAt ?? null,
    created_at: m.createdAt ?? null,
    updated_at: m.updatedAt ?? null,
    conversation_id: m.conversationId ?? null,
    synced_at: now,
  };
}

/**
 * Syncs the current membership of each group (List Group Members, perPage 1000, every page) and
 * replaces what was stored, one transaction per group. A group that no longer exists is recorded
 * in `synced_groups`, not fatal. Auth and account errors propagate (they stop the app).
 */
export async function syncGroupMembers(
  deps: { db: Kysely<Database>; nowSeconds: () => number; runId: string },
  chat: ChatApi,
  appId: string,
  guids: readonly string[],
): Promise<GroupSyncResult> {
  const result: GroupSyncResult = { groups: 0, members: 0, notFound: 0, rejected: 0, failed: [] };
  const limit = pLimit(GROUP_CONCURRENCY);
  await Promise.all(
    guids.map((guid) =>
      limit(async () => {
        const members: NewGroupMemberRow[] = [];
        const rejects: NewRejectedRow[] = [];
        let previous: string | undefined;
        let pageSize: number | undefined;
        for (let page = 1; page <= MAX_MEMBER_PAGES; page++) {
          const res = await chat.listGroupMembers(guid, page, MAX_MEMBERS_PER_PAGE);
          if (!res.found) {
            await deps.db.transaction().execute((trx) => markGroupNotFound(trx, appId, guid, deps.nowSeconds()));
            result.notFound++;
            return;
          }
          if (res.entries.length === 0) break;
          const key = JSON.stringify(res.entries.map((e) => (e && typeof e === 'object' ? (e as Record<string, unknown>).uid : e)));
          if (key === previous) throw new ListingError(`List Group Members of ${guid} page ${page} repeats the previous page; stopping this app`);
          previous = key;
          const now = deps.nowSeconds();
          res.entries.forEach((raw, i) => {
            const parsed = ApiGroupMemberSchema.safeParse(raw);
            if (parsed.success) members.push(memberRow(appId, guid, parsed.data, now));
            else {
              const uid = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).uid : undefined;
              rejects.push({
                app_id: appId, endpoint: 'group_members', record_key: `${guid}/${typeof uid === 'string' ? uid : `page${page}#${i}`}`,
                reason: describeZodError(parsed.error), payload: JSON.stringify(raw) ?? 'undefined', fingerprint: fingerprint(raw), run_id: deps.runId, created_at: now,
              });
            }
          });
          // The size the server really uses; a short page is the last one. `total` is never
          // trusted alone (the published example contradicts itself).
          pageSize ??= res.pagination?.per_page && res.pagination.per_page > 0 ? Math.min(res.pagination.per_page, MAX_MEMBERS_PER_PAGE) : res.entries.length;
          if (res.entries.length < pageSize) break;
        }
        await deps.db.transaction().execute(async (trx) => {
          await replaceGroupMembers(trx, appId, guid, members, deps.nowSeconds());
          result.rejected += await insertRejected(trx, rejects);
        });
        result.groups++;
        result.members += members.length;
      }).catch((err: unknown) => {
        // Auth and account errors stop the app; anything else fails this group only.
        if (err instanceof ApiError && (err.kind === 'auth' || err.kind === 'account')) throw err;
        result.failed.push(`${guid}: ${err instanceof Error ? err.message : String(err)}`);
      }),
    ),
  );
  return result;
}
