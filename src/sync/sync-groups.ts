import type { Kysely } from 'kysely';
import type { ChatApi } from '../source/chat-api.js';
import { MAX_MEMBERS_PER_PAGE } from '../source/chat-api.js';
import { ApiError, invalidPage, refusesKey } from '../source/errors.js';
import { DistinctIds, entryIds, ListingEnd, overlapsPrevious, pageMeta, sameIds, servedSizeToCheck } from '../source/listing-evidence.js';
import { ListingError } from '../source/listing-problem.js';
import { ApiGroupMemberSchema, describeZodError } from '../source/schemas.js';
import { fastParseMember } from '../source/record-fastpath.js';
import { markGroupFailed, markGroupNotFound, replaceGroupMembers } from '../store/groups-repo.js';
import { insertRejected } from '../store/runs-repo.js';
import type { Database, NewGroupMemberRow, NewRejectedRow } from '../store/schema.js';
import { rejectedRow } from '../transform/rejected-row.js';
import {
  checkServedSize,
  FALLBACK_MEMBERS_PER_PAGE,
  type FoundPage,
  learnedFromListing,
  membersFirstPages,
  mergeLearned,
  type MembersPaging,
  NOTHING_LEARNED,
  type PagingLearned,
  PageSizeCapped,
  PageSizeRefused,
} from './member-paging.js';

export interface GroupSyncResult {
  groups: number;
  members: number;
  notFound: number;
  rejected: number;
  /** Members listed that did not parse (kept aside in rejected_records, not in group_members). */
  unreadMembers: number;
  /** The first of them, as `guid/uid: reason`. */
  firstUnread?: string | undefined;
  /** Groups whose members could not be synced, with the reason; retried on the next run. */
  failed: string[];
  /** Members were read with a smaller page than the documented maximum: why, and the refusal. */
  pageSizeRefused?: { line: string; refusal: string } | undefined;
}

/**
 * A group listing more members than maxMembersPerGroup: its members are held in memory until the
 * listing adds up (they replace the stored ones in one transaction), so an endless member listing
 * would exhaust memory. It fails the app, not just the group: the operator has to look.
 */
export class GroupTooLargeError extends ListingError {
  constructor(message: string) {
    super(message, 'GROUP_TOO_LARGE');
    this.name = 'GroupTooLargeError';
  }
}

/** List Group Members answered ERR_GUID_NOT_FOUND: the group no longer exists. */
class GroupGone extends Error {}

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

interface ListedMembers {
  members: NewGroupMemberRow[];
  rejects: NewRejectedRow[];
  /** The member count changed between pages (first and last figures), if it did. */
  moved?: string;
  /** Pages that brought members (1: the group fits on one page, and nothing can move between pages). */
  pages: number;
  /** What the listing proved about the service (with what was known before it). */
  learned: PagingLearned;
}

/** Readings of one group, at most, until two in a row agree (see stableMembers). */
const MAX_MEMBER_READINGS = 3;

/**
 * One listing of a group's members (perPage 1000, every page), with the same end-of-listing rules
 * as List Calls: no single field (per_page, total, a short page) is trusted alone, nor how pages
 * are numbered (firstPages). Throws GroupGone when the group no longer exists, and ListingError
 * when the listing does not add up.
 */
async function listMembers(
  deps: { nowSeconds: () => number; runId: string; region: string; maxMembers?: number | undefined; paging: MembersPaging; known: PagingLearned },
  chat: ChatApi,
  appId: string,
  guid: string,
): Promise<ListedMembers> {
  const members: NewGroupMemberRow[] = [];
  const rejects: NewRejectedRow[] = [];
  const perPage = deps.paging.perPage;
  const end = new ListingEnd(perPage, `List Group Members of ${guid}`, 'members', deps.known.largestServed, deps.known.whole);
  const seen = new DistinctIds();
  let previous: string[] | undefined;
  let askedAgain = false;
  let complete = false;
  let firstTotal: number | undefined;
  let lastTotal: number | undefined;
  /**
   * Every page with members said a total equal to its own row count: a server counting what it
   * serves. Its totals say nothing about members moving (20 → 17 over pages of 20 and 17), so they
   * are not compared, as when no total is reported (two equal readings decide).
   */
  let ownCounts = true;
  let pages = 0;
  /** The first page: its members and reported total (see the page-size check below). */
  let first0: { count: number; total: number | undefined } | undefined;
  let sizeChecked = false;
  /** The second page was read (so the first had members) and did not repeat the first (see learnedFromListing). */
  let secondDiffers = false;
  /** Entries on the pages read (a page repeating the one before it aside): more than `seen` means a member listed twice. */
  let entriesListed = 0;
  // Only the service's own code says the group is gone (GroupGone), and only said twice in a row: a
  // single such answer, believed, removed every member of a group that exists, ok (probe round 16 b,
  // F3). Asked for page 0, a server counting from 1 might say so too, so there it only sends
  // firstPages on to page 1. Later pages are checked against the first (laterPage, below).
  /** What page 0 said: the group gone, or members shown. */
  let zero: 'gone' | 'members' | undefined;
  const listPage = async (page: number): Promise<FoundPage> => {
    let res = await chat.listGroupMembers(guid, page, perPage);
    if (!res.found) res = await chat.listGroupMembers(guid, page, perPage);
    // Page 0 and page 1 must tell one story: page 0 gone and page 1 an empty group, or page 0
    // showing members and page 1 gone, removed every member of a group that exists, ok (probe
    // round 17 a: a server counting from 0 answering not-found twice on page 0; one counting from
    // 1 twice on page 1). Either is a listing that cannot be believed: the stored members stay.
    if (page === 0) {
      zero = !res.found ? 'gone' : res.entries.length > 0 ? 'members' : undefined;
      return res.found ? res : { found: true, entries: [], pagination: undefined };
    }
    if (page === 1 && zero === 'members' && !res.found) throw new ListingError(`List Group Members of ${guid} answered ERR_GUID_NOT_FOUND on page 1 while page 0 shows members`);
    if (page === 1 && zero === 'gone' && res.found && res.entries.length === 0) throw new ListingError(`List Group Members of ${guid} answered ERR_GUID_NOT_FOUND on page 0 and no members on page 1`);
    if (res.found) return res;
    throw new GroupGone();
  };
  const first = await membersFirstPages(perPage, deps.known, chat, guid, listPage);
  const prefetched = new Map(first.pages.map((p) => [p.requested, p.res]));
  // A later page answering ERR_GUID_NOT_FOUND: the group is gone only if its first page, asked
  // again, says so too (a group deleted while its pages were read does). Believed at once, one such
  // answer removed every member of a group that exists, ok (a hostile fake).
  const laterPage = async (page: number): Promise<FoundPage> => {
    try {
      return await listPage(page);
    } catch (err) {
      // A page past the last refused (404 or 400 "Invalid page.", as Django REST framework's
      // paging answers) after a short page whose figures agree: the end. It failed every group on
      // every run (a hostile fake); anywhere else it still fails the group.
      if (invalidPage(err) && end.endsBeforeHere(seen.count)) return { found: true, entries: [], pagination: undefined };
      if (!(err instanceof GroupGone) || !(await chat.listGroupMembers(guid, first.base, perPage)).found) throw err;
      throw new ListingError(`List Group Members of ${guid} answered ERR_GUID_NOT_FOUND on page ${page} while its first page still shows the group`);
    }
  };
  for (let index = 0; index < MAX_MEMBER_PAGES; index++) {
    const page = index + first.base;
    const res = prefetched.get(page) ?? (await laterPage(page));
    prefetched.delete(page);
    const meta = pageMeta(res.pagination, res.entries.length);
    if (index === 0 && res.entries.length > 0) first0 = { count: res.entries.length, total: meta.total };
    // A capped first page: the second, asked again at the size served, must be exactly the same
    // (servedSizeToCheck; see CallListing: offsets stepping by perPage lost 150 of 250 members, ok,
    // with the published `total: 0`).
    // A total equal to the first page's count says that page is the whole group only once the run
    // has seen this server's totals count more than a page (PagingLearned.whole): a server stating
    // each page's own count (20 of 45 a page, offsets stepping by the 1000 asked) skipped the check,
    // 20 of 45 stored, ok (a hostile fake).
    const served = index === 1 && !sizeChecked ? servedSizeToCheck(first0 && (deps.known.whole.total ? first0 : { count: first0.count, total: undefined }), perPage) : undefined;
    if (served !== undefined) {
      sizeChecked = true;
      await checkServedSize(chat, guid, { page, perPage, served, entries: res.entries, first: previous });
    }
    if (meta.total !== undefined && res.entries.length > 0 && meta.total !== res.entries.length) ownCounts = false;
    // A zero on the empty page after members is no count (as in ListingEnd.afterEmpty): compared
    // with the first page's, every group "moved" (40 → 0) on every reading.
    if (meta.total !== undefined && !(res.entries.length === 0 && meta.total === 0 && firstTotal !== undefined)) {
      firstTotal ??= meta.total;
      lastTotal = meta.total;
    }
    if (res.entries.length === 0) {
      if (index === 1) secondDiffers = true;
      const d = end.afterEmpty(index, meta);
      if (d.kind === 'end' || askedAgain) {
        complete = true;
        break;
      }
      askedAgain = true; // the figures say more follows: ask once more
      index--;
      continue;
    }
    askedAgain = false;
    const ids = entryIds(res.entries, 'uid');
    const repeats = sameIds(previous, ids);
    if (index === 1) secondDiffers = !repeats;
    if (!repeats) {
      for (const id of ids) seen.add(id);
      entriesListed += ids.length;
    }
    if (deps.maxMembers !== undefined && seen.count > deps.maxMembers) {
      throw new GroupTooLargeError(`List Group Members of ${guid} listed more than ${deps.maxMembers} members (maxMembersPerGroup); stopped, the listing looks endless. If the group really is that large, raise maxMembersPerGroup in the config`);
    }
    const d = end.afterPage({ index, count: ids.length, meta, repeatsPrevious: repeats, overlapsPrevious: !repeats && overlapsPrevious(previous, ids) }, seen.count);
    if (d.kind === 'broken') throw new ListingError(d.why);
    if (repeats) {
      complete = true;
      break;
    }
    previous = ids;
    pages++;
    const now = deps.nowSeconds();
    res.entries.forEach((raw, i) => {
      const fast = fastParseMember(raw);
      const parsed = fast ? { success: true as const, data: fast } : ApiGroupMemberSchema.safeParse(raw);
      if (parsed.success) members.push(memberRow(appId, guid, parsed.data, now));
      else {
        const uid = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).uid : undefined;
        const key = `${guid}/${typeof uid === 'string' ? uid : `page${page}#${i}`}`;
        rejects.push(rejectedRow({ appId, region: deps.region, runId: deps.runId, now }, 'group_members', key, describeZodError(parsed.error), raw));
      }
    });
    if (d.kind === 'end') {
      complete = true;
      break;
    }
  }
  const short = end.shortfall(seen.count);
  if (!complete || (short ?? 0) > 0) {
    throw new ListingError(complete ? `the listing reports ${end.minTotal} members but ${seen.count} could be listed` : `the listing did not end within ${MAX_MEMBER_PAGES} pages`);
  }
  // Without a total, as for List Calls: a page shorter than later ones, or fewer pages than
  // total_pages, is a listing read in part (a page served a row short lost that member, ok).
  const unproved = end.unproved(seen.count);
  if (unproved) throw new ListingError(unproved);
  // A member listed twice without a total to count against: pages that overlap show one member
  // twice and skip another (a hostile fake: the last entry of page 2 repeated the first member,
  // 249 of 250 stored, ok). A group lists each member once; with a total, the count above decides.
  if (end.minTotal === undefined && entriesListed > seen.count) {
    throw new ListingError(`List Group Members of ${guid} listed ${entriesListed - seen.count} member(s) twice and reports no total, so pages may overlap and skip members`);
  }
  const learned = mergeLearned(deps.known, learnedFromListing({ guid, pageZero: first.pageZero, secondDiffers, largestPage: end.largestPage, whole: end.provedWhole(seen.count) }));
  return { members, rejects, pages, learned, ...(firstTotal !== lastTotal && !ownCounts ? { moved: `${firstTotal} → ${lastTotal}` } : {}) };
}

function sameMembers(a: ListedMembers, b: ListedMembers): boolean {
  if (a.members.length !== b.members.length) return false;
  const uids = new Set(a.members.map((m) => m.uid));
  return b.members.every((m) => uids.has(m.uid));
}

/**
 * A group's members from a listing that can be trusted: one that fits on one page, or two readings
 * in a row that list the same members with no change in the count. A member who leaves while the
 * pages are read moves another from a later page onto one already read, unseen; with a member
 * joining at the same time the count stays level, and without a total there is no count at all
 * (a hostile fake lost a current member and kept one who had left, ok, both ways). Reading again
 * costs the group's pages once more, only for groups larger than a page. Undefined when the group
 * no longer exists; throws when the readings keep changing.
 */
async function stableMembers(deps: Parameters<typeof listMembers>[0], chat: ChatApi, appId: string, guid: string): Promise<ListedMembers | undefined> {
  let before: ListedMembers | undefined;
  const changes: string[] = [];
  let known = deps.known;
  for (let reading = 1; reading <= MAX_MEMBER_READINGS; reading++) {
    let listed: ListedMembers;
    try {
      listed = await listMembers({ ...deps, known }, chat, appId, guid);
    } catch (err) {
      if (err instanceof GroupGone) return undefined;
      if (err instanceof PageSizeCapped) {
        // The size served from now on, for every group of this run; not counted as a reading.
        if (deps.paging.perPage > err.served) {
          deps.paging.perPage = err.served;
          deps.paging.refused = { line: `${err.message}; members are read ${err.served} to a page in this run`, refusal: err.message };
        }
        reading--;
        continue;
      }
      if (!(err instanceof PageSizeRefused)) throw err;
      // The documented default from now on, for every group of this run (groups listed at the same
      // time may each have been refused); not counted as a reading.
      if (deps.paging.perPage === err.perPage) {
        const line = `List Group Members refused perPage=${err.perPage}, the documented maximum; members are read ${FALLBACK_MEMBERS_PER_PAGE} to a page in this run`;
        deps.paging.perPage = FALLBACK_MEMBERS_PER_PAGE;
        deps.paging.refused = { line, refusal: err.refusal.message };
      }
      reading--;
      continue;
    }
    // Two readings in a row with the same members are believed even if the count moved in them: a
    // member who left unseen is listed by the reading before it left and not by the one after, so
    // the two differ. A count that merely drifts (a cached figure) kept such groups partial on every
    // run, nothing stored (probe round 16 b, F8). Not when both moved the same way, though: a member
    // who leaves and rejoins in step with the reads hides the same member from both (probe round
    // 17 a: 1,499 of 1,500 stored, ok).
    known = listed.learned;
    const agree = before !== undefined && sameMembers(before, listed) && !(before.moved !== undefined && before.moved === listed.moved);
    if ((!listed.moved && listed.pages <= 1) || agree) return listed;
    if (listed.moved) changes.push(`count ${listed.moved}`);
    else if (before) changes.push('other members');
    before = listed;
  }
  throw new ListingError(`the members changed while the group was listed, ${MAX_MEMBER_READINGS} readings in a row (${changes.join(', ')}), so members may have moved between pages unseen`);
}

/**
 * A 403 of List Group Members with a code of its own (ERR_GROUP_NOT_JOINED, say) refuses this group,
 * not the key: it failed the whole app on every run, its other groups unsynced, and the line blamed
 * the key that the app's other requests had just used (probe round 16 b, F7).
 */
function refusesGroupOnly(err: ApiError): boolean {
  return err.kind === 'auth' && !refusesKey(err.kind, err.status, err.serviceCode);
}

function refusedGroupLine(err: ApiError): string {
  return `List Group Members refused this group (HTTP ${err.status ?? '?'}${err.serviceCode ? ` ${err.serviceCode}` : ''}), not the key: its stored members stay`;
}

/**
 * Syncs the current membership of each group and replaces what was stored, one transaction per
 * group, only from a listing that adds up. A group that no longer exists (ERR_GUID_NOT_FOUND) is
 * recorded in `synced_groups`, not fatal. Auth and account errors propagate (they stop the app).
 */
export async function syncGroupMembers(
  deps: { db: Kysely<Database>; nowSeconds: () => number; runId: string; region: string; maxMembers?: number },
  chat: ChatApi,
  appId: string,
  guids: readonly string[],
): Promise<GroupSyncResult> {
  const result: GroupSyncResult = { groups: 0, members: 0, notFound: 0, rejected: 0, unreadMembers: 0, failed: [] };
  const paging: MembersPaging = { perPage: MAX_MEMBERS_PER_PAGE };
  /** One group, told what the groups before it proved; returns what it proved itself. */
  const syncGroup = async (guid: string, known: PagingLearned): Promise<PagingLearned> => {
    try {
      // Still changing after MAX_MEMBER_READINGS, the stored members stay and the group is retried on the next run.
      const listed = await stableMembers({ ...deps, paging, known }, chat, appId, guid);
      if (!listed) {
        await deps.db.transaction().execute((trx) => markGroupNotFound(trx, appId, guid, deps.nowSeconds()));
        result.notFound++;
        return NOTHING_LEARNED;
      }
      const { members, rejects } = listed;
      await deps.db.transaction().execute(async (trx) => {
        await replaceGroupMembers(trx, appId, guid, members, deps.nowSeconds());
        result.rejected += await insertRejected(trx, rejects);
      });
      result.unreadMembers += rejects.length;
      result.firstUnread ??= rejects[0] && `${rejects[0].record_key}: ${rejects[0].reason}`;
      result.groups++;
      result.members += members.length;
      return listed.learned;
    } catch (err) {
      // A refused key or account, and a group over the cap, stop the app (the groups after it never
      // start); anything else fails this group only.
      if (err instanceof GroupTooLargeError || (err instanceof ApiError && (err.kind === 'account' || (err.kind === 'auth' && !refusesGroupOnly(err))))) throw err;
      result.failed.push(`${guid}: ${err instanceof ApiError && refusesGroupOnly(err) ? refusedGroupLine(err) : err instanceof Error ? err.message : String(err)}`);
      // Remembered, so the next run syncs it again even when its window lists no call to it.
      await markGroupFailed(deps.db, appId, deps.region, guid, deps.nowSeconds()).catch(() => undefined);
      return NOTHING_LEARNED;
    }
  };
  // Group i starts once groups 0 … i-4 have all ended, told what they proved (see PagingLearned):
  // at most GROUP_CONCURRENCY at once, and the same requests for the same groups on every run,
  // whichever group happens to end first (with p-limit alone they varied). upTo[i] is what groups
  // 0 … i proved, settled once they all have ended.
  const upTo: Promise<PagingLearned>[] = [];
  guids.forEach((guid, i) => {
    const before = upTo[i - GROUP_CONCURRENCY] ?? Promise.resolve(NOTHING_LEARNED);
    const own = before.then((known) => syncGroup(guid, known));
    upTo.push(Promise.all([upTo[i - 1] ?? Promise.resolve(NOTHING_LEARNED), own]).then(([a, b]) => mergeLearned(a, b)));
  });
  await Promise.all(upTo);
  result.pageSizeRefused = paging.refused;
  return result;
}
