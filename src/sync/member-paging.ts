import type { ChatApi, MembersPage } from '../source/chat-api.js';
import { ApiError, invalidPage } from '../source/errors.js';
import { entryIds, pageMeta, sameIds } from '../source/listing-evidence.js';
import { ListingError } from '../source/listing-problem.js';
import { NO_WHOLE_FIGURES, type WholeFigures } from '../source/whole-figures.js';
import { firstPages, type FirstPages } from '../source/page-numbering.js';

/** A page of members that was found (a group gone is the caller's to decide). */
export type FoundPage = MembersPage & { found: true };

/** List Group Members' documented default page size: asked when the service refuses the maximum. */
export const FALLBACK_MEMBERS_PER_PAGE = 100;

/** The page size members are asked with, for one app's run; shared by the groups listed at once. */
export interface MembersPaging {
  /** Lowered once the service refuses it or serves less. */
  perPage: number;
  /** Why it was lowered (see GroupSyncResult.pageSizeRefused). */
  refused?: { line: string; refusal: string };
}

/**
 * What group listings proved about List Group Members, for the groups listed after them. Each
 * group used to find out again how pages are numbered (page 0, then page 1) and that its short
 * first page was not the server's page size (one more, empty, page): three requests where one held
 * the members, 130 for the bench's 40 groups (issue 16's requests per synced call missed its
 * target). Merged in a fixed order (syncGroupMembers), so a run's requests do not depend on which
 * group happened to end first.
 */
export interface PagingLearned {
  /** Pages are numbered from 1: page 1 is asked first (see membersFirstPages). */
  fromOne: boolean;
  /** Groups whose page 0 was refused (at most two kept): two of them prove pages count from 1 (learnedFromListing). */
  zeroRefusedBy: readonly string[];
  /** The largest page a listing was served (ListingEnd's servedElsewhere). */
  largestServed: number;
  /** The figures a listing showed to count a whole group (ListingEnd's wholeElsewhere). */
  whole: WholeFigures;
}

export const NOTHING_LEARNED: PagingLearned = { fromOne: false, zeroRefusedBy: [], largestServed: 0, whole: NO_WHOLE_FIGURES };

/** Refusals of page 0 by this many groups prove pages count from 1. */
const REFUSALS_TO_PROVE = 2;

export function mergeLearned(a: PagingLearned, b: PagingLearned): PagingLearned {
  const zeroRefusedBy = [...new Set([...a.zeroRefusedBy, ...b.zeroRefusedBy])].slice(0, REFUSALS_TO_PROVE);
  return {
    fromOne: a.fromOne || b.fromOne || zeroRefusedBy.length >= REFUSALS_TO_PROVE,
    zeroRefusedBy,
    largestServed: Math.max(a.largestServed, b.largestServed),
    whole: { total: a.whole.total || b.whole.total, pages: a.whole.pages || b.whole.pages },
  };
}

/** A group's first page refused (HTTP 400 or 422) at a page size above the documented default. */
export class PageSizeRefused extends Error {
  constructor(readonly perPage: number, readonly refusal: ApiError) {
    super(refusal.message);
  }
}

/** Pages served smaller than perPage, with offsets stepping by perPage: rows between pages are never served. */
export class PageSizeCapped extends Error {
  constructor(readonly perPage: number, readonly served: number) {
    super(`List Group Members served pages of ${served} for perPage=${perPage} with offsets stepping by ${perPage}`);
  }
}

/**
 * The page-size check (servedSizeToCheck): a group's second page, `page`, asked again at the size
 * its first page was served. It must list what the second page listed (else PageSizeCapped: offsets
 * step by the perPage asked). Not found once is asked again, as any page is: taken for a check
 * passed, one such answer let those offsets through (a hostile fake: 20 of 45 stored, ok). And an
 * answer that repeats the first page while its own figures put that page inside the group is a
 * server ignoring `page` (paging by cursor alone), whose pages cannot be followed: capped at 100
 * with total_pages from the perPage asked, its second page repeated the first "past the end", 100
 * of 250 stored, ok (a hostile fake).
 */
export async function checkServedSize(
  chat: ChatApi,
  guid: string,
  read: { page: number; perPage: number; served: number; entries: readonly unknown[]; first: readonly string[] | undefined },
): Promise<void> {
  const ask = async (): Promise<MembersPage> => {
    try {
      return await chat.listGroupMembers(guid, read.page, read.served);
    } catch (err) {
      // Past the end at this size too, as the page read at perPage was (see invalidPage).
      if (invalidPage(err) && read.entries.length === 0) return { found: true, entries: [], pagination: undefined };
      throw err;
    }
  };
  let check = await ask();
  if (!check.found) check = await ask();
  const at = `page ${read.page} at perPage=${read.served}`;
  if (!check.found) throw new ListingError(`List Group Members of ${guid} answered ERR_GUID_NOT_FOUND for ${at} while its other pages show the group`);
  const ids = entryIds(check.entries, 'uid');
  if (!sameIds(entryIds(read.entries, 'uid'), ids)) throw new PageSizeCapped(read.perPage, read.served);
  const meta = pageMeta(check.pagination, check.entries.length);
  const inside = (meta.totalPages !== undefined && meta.totalPages > 1) || (meta.total !== undefined && meta.total > read.served);
  if (inside && ids.length > 0 && sameIds(read.first, ids)) {
    throw new ListingError(`List Group Members of ${guid} answered ${at} with its first page again, where its figures say more follow; the service's paging cannot be followed, so the listing cannot be proved complete`);
  }
}

function refusesPageSize(err: unknown): err is ApiError {
  return err instanceof ApiError && err.kind === 'client' && (err.status === 400 || err.status === 422);
}

/** The first pages of a group (FirstPages), or page 1 alone when the run already knows pages count from 1. */
export type MemberFirstPages = Omit<FirstPages<FoundPage>, 'pageZero'> & { pageZero: FirstPages<FoundPage>['pageZero'] | 'unasked' };

/**
 * A group's first page and how pages are numbered. Once the run has proved pages count from 1,
 * page 1 is asked alone; an answer that is not plainly a first page (the group gone, no members, a
 * `current_page` other than 1) is asked the long way, page 0 and page 1, so that their rules about
 * a group gone still hold. `listPage` is the group's own reader (it keeps those rules). A service
 * capping the page size below the documented maximum may refuse it outright rather than serve
 * smaller pages: that is PageSizeRefused.
 */
export async function membersFirstPages(
  perPage: number,
  known: PagingLearned,
  chat: ChatApi,
  guid: string,
  listPage: (page: number) => Promise<FoundPage>,
): Promise<MemberFirstPages> {
  try {
    if (known.fromOne) {
      const one = await chat.listGroupMembers(guid, 1, perPage);
      if (one.found && one.entries.length > 0 && (one.pagination?.current_page ?? 1) === 1) return { base: 1, pages: [{ requested: 1, res: one }], pageZero: 'unasked' };
    }
    return await firstPages(listPage, 'uid');
  } catch (err) {
    throw perPage > FALLBACK_MEMBERS_PER_PAGE && refusesPageSize(err) ? new PageSizeRefused(perPage, err) : err;
  }
}

/**
 * What a group's listing, read to its end, proves for the rest of the run. Pages count from 1 when
 * page 0 was empty or page 1 again beside a page 1 with members and a second page that did not
 * repeat the first (`secondDiffers`: a second page is read only after a first with members), or
 * when page 0 was refused for two groups (merged in mergeLearned). Not from one group alone
 * otherwise: a server counting from 0 that answers a page past the end with the last page answers
 * pages 0 and 1 of a one-page group alike, and its page 2 repeats them; and one 404 from a proxy on
 * a page 0 is a refusal too. Believed, every larger group of the run lost its page 0 (hostile
 * fakes: 500 members lost to one such 404, ok).
 */
export function learnedFromListing(seen: { guid: string; pageZero: MemberFirstPages['pageZero']; secondDiffers: boolean; largestPage: number; whole: WholeFigures }): PagingLearned {
  const firstFromOne = seen.pageZero === 'empty' || seen.pageZero === 'same';
  return mergeLearned(NOTHING_LEARNED, {
    fromOne: firstFromOne && seen.secondDiffers,
    zeroRefusedBy: seen.pageZero === 'refused' ? [seen.guid] : [],
    largestServed: seen.largestPage,
    whole: seen.whole,
  });
}
