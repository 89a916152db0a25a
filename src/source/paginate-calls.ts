import type { CallsApi, ListCallsPage } from './calls-api.js';
import { firstPages, type FirstPages } from './page-numbering.js';
import { DistinctIds, entryIds, entryTimes, ListingEnd, OrderObserver, overlapsPrevious, pageMeta, sameIds, servedSizeToCheck, totalIsPagesOwn } from './listing-evidence.js';
import { allOlder, NewestTimes, olderThanWindow } from './listing-times.js';
import { ListingError } from './listing-problem.js';
import { cameUp, countProof, excessOver, FallCheck, riseAbove, servedOver, TotalTrail, type Page } from './listing-proof.js';
import { listingVerdict, unexplained, type FirstAgain } from './listing-verdict.js';
import type { EntryTimes } from './listing-order.js';
import { EdgeTies } from './listing-ties.js';
import { pageReader, readAgain, readBackwards, readFirstAgain } from './listing-reads.js';
import type { CallsPage, ListingOptions, ListingOutcome, PassResult } from './listing-types.js';

export type { CallsPage, ListingOptions, ListingOutcome } from './listing-types.js';

/** Consecutive new pages (beyond the furthest read) that add no call before paging gives up. */
const MAX_PAGES_WITHOUT_NEW = 3;
/** Times `total` may fall and paging step back in one pass; past that the pages are read again in place (see #pass). */
const MAX_STEP_BACKS = 3;

/**
 * Pages through List Calls and proves what it read (issue 11). Nothing about the service is
 * assumed; each assumption is checked on every run:
 * - page numbering: page 0 is asked first; `current_page` (or page 0 answering differently from
 *   page 1) tells whether pages count from 0 or 1;
 * - order: observed from the entries' times on every page; the early stop at `lowerBound` is taken
 *   only once newest-first has been seen in this run, never on a page without usable times;
 * - end: see `ListingEnd` (no single field is trusted);
 * - `total` falling between pages means calls were removed above the cursor: it steps back (a few
 *   times at most, then reads the pages the moved calls lie on again, in place);
 * - completeness: a listing read to its end counts its distinct calls against the reported total;
 *   short, it is read once more (calls seen in either pass count), and the outcome names the shortfall;
 *   with no total, the pages read are held against `total_pages` the same way; a window (no count
 *   of its own) holds calls of one time split across pages against what each pass showed (EdgeTies).
 * Read `pages()` to the end (left early, `outcome()` is not complete), then ask `outcome()`.
 */
export class CallListing {
  readonly #distinct = new DistinctIds();
  readonly #order = new OrderObserver();
  readonly #trail = new TotalTrail();
  #requests = 0;
  #outcome: ListingOutcome | undefined;
  #pageBase: 0 | 1 = 1;
  /** The last pass's first page, read again after it (see #movedUp). */
  #first: Page | undefined;
  /** The first pass's newest times, and calls a later pass found that are not newer (missed by it). */
  readonly #firstPassTimes = new NewestTimes();
  #missed = 0;
  readonly #ties = new EdgeTies();

  /** perPage asked; lowered to the served size once offsets are seen to step by the size asked. */
  #pageSize: number;
  /** Whether the service's offsets were checked against a page capped below perPage (once a listing). */
  #sizeChecked = false;
  /** Reported totals are read as absent: they were seen to state a page's own count (see totalIsPagesOwn). */
  #totalsPerPage = false;

  constructor(
    private readonly api: Pick<CallsApi, 'listCalls'>,
    pageSize: number,
    private readonly opts: ListingOptions = {},
  ) {
    this.#pageSize = pageSize;
  }

  /** Whether a pass showed `id` (see DistinctIds.has). */
  listed(id: string): boolean {
    return this.#distinct.has(id);
  }

  outcome(): ListingOutcome {
    return (
      this.#outcome ?? {
        complete: false, problem: 'the listing was not read to its end', order: this.#order.order, distinct: this.#distinct.count,
        reportedTotal: undefined, pages: this.#requests, stoppedEarly: false, pageBase: this.#pageBase, relisted: false, endedBecause: 'not finished',
      }
    );
  }

  async *pages(): AsyncGenerator<CallsPage, void, undefined> {
    let pass = yield* this.#pass(true);
    // Pages capped below perPage, offsets stepping by perPage: the first pass skipped rows; the
    // listing is read again at the served size, and that pass is the one proved below.
    const resized = pass.resized === true;
    if (resized) pass = yield* this.#resizedPass();
    let relisted = resized;
    let unstable: number | undefined;
    let again: FirstAgain | undefined; // the first page read again after the last pass (#firstAgain)
    let ownCount = false; // calls moved up onto the first page, or counted past the totals: see countProof
    let excess = 0;
    let servedPast = 0; // entries the first pass served past the totals (servedOver)
    const relist = !pass.stoppedEarly && this.opts.relistOnShortfall !== false;
    if (relist && ((countProof(pass, this.#order, this.#distinct.count, this.#trail, false).shortfall ?? 0) > 0 || pass.end.unproved(this.#distinct.count) !== undefined)) {
      relisted = true;
      pass = yield* this.#resizedPass();
      if (!pass.stoppedEarly && this.#order.sortedBy) again = yield* this.#firstAgain(); // an ordered listing's second pass must show no call moved up either (cameUp)
      else if (pass.end.minTotal === undefined) unstable = this.#missed || undefined; // no total, no order: passes held against each other, as below (taken alone, the second hid 6 of 116 missing: probe69)
    } else if (
      pass.pages > 1 && this.opts.relistOnShortfall !== false &&
      (pass.stoppedEarly
        ? this.#order.tiedAcrossPages
        : (pass.end.minTotal === undefined && (!this.#order.sortedBy || this.#order.tiedAcrossPages)) ||
          (excess = excessOver(this.#distinct.count, pass, this.#trail)) > 0 || (servedPast = servedOver(pass, this.#trail)) > 0 || unexplained((again = yield* this.#firstAgain()), pass) || pass.end.minTotal === undefined)
    ) {
      // Only a second pass can tell a listing that lost nothing from one that did: with no total (no order to page by; ties an
      // ORDER BY leaves undecided split differently on each request: 10 of 300 lost; or in order, a call removed below the first
      // page shifts the rest up and the next page skips one: ok, one missing); in a window with such ties (a backfill lost 10 of
      // 201, ok); after calls moved up onto the first page while it was read, or were counted past the totals; or when arrivals
      // above the cursor did not show (unexplained). It must add no call older than the first saw.
      relisted = true;
      const moved = again?.moved ?? 0;
      pass = yield* this.#resizedPass();
      // After calls moved or were counted past the totals, the second pass stands on its own (read its first page again too).
      if (moved > 0 || excess > 0 || servedPast > 0) {
        ownCount = true;
        again = yield* this.#firstAgain();
      } else {
        if (again === undefined) unstable = this.#missed || undefined;
        // In order with no total, calls the second pass found that the first skipped (churn): a third must add none to the two.
        else if (pass.end.minTotal === undefined && this.#missed > 0) {
          const second = this.#missed;
          pass = yield* this.#resizedPass();
          unstable = this.#missed - second || undefined;
        }
        again = undefined;
      }
    }
    const problem = listingVerdict({ pass, order: this.#order, ties: this.#ties, trail: this.#trail, union: this.#distinct.count, ownCount, relisted, unstable, missed: this.#missed, again, servedPast });
    this.#outcome = {
      complete: !pass.stoppedEarly && !problem,
      ...(problem ? { problem } : {}),
      order: this.#order.order,
      ...(this.#order.sortedBy ? { orderKey: this.#order.sortedBy.key } : {}),
      distinct: this.#distinct.count,
      reportedTotal: pass.end.minTotal,
      pages: this.#requests,
      stoppedEarly: pass.stoppedEarly,
      pageBase: this.#pageBase,
      relisted,
      endedBecause: pass.why,
    };
  }

  /** A later pass, read again at the served size while it finds its pages capped: a cap that starts mid-listing shows only on a later
   * pass, whose finding was ignored (200 of 300 read, ok: probe round 11 F5). The size only falls; a cap still moving fails the listing. */
  async *#resizedPass(): AsyncGenerator<CallsPage, PassResult, undefined> {
    for (let tries = 0; tries < 3; tries++) {
      const pass = yield* this.#pass(false);
      if (!pass.resized) return pass;
    }
    throw new ListingError(`List Calls served pages smaller than asked, the size changing from request to request (last ${this.#pageSize}), with offsets stepping by the size asked: the listing cannot be read whole`);
  }

  /** Whether the page after a first page capped at `served` rows (servedSizeToCheck), `asked` at perPage, is the same page asked at
   * the served size. Not, pages are read at the served size (the caller reads the listing again). */
  async #offsetsFollowServed(page: number, asked: ListCallsPage, served: number): Promise<boolean> {
    this.#sizeChecked = true;
    const check = await this.#list(page, served);
    if (sameIds(entryIds(asked.entries, 'sessionId'), entryIds(check.entries, 'sessionId'))) return true;
    this.#pageSize = served;
    return false;
  }

  async #list(page: number, size = this.#pageSize): Promise<ListCallsPage> {
    const cap = this.opts.maxPages;
    if (cap !== undefined && this.#requests >= cap) {
      throw new ListingError(`List Calls did not end within ${cap} pages (maxPagesPerRun); stopped, the listing looks endless. If the app really holds more than ${cap} pages of calls, raise maxPagesPerRun in the config`);
    }
    this.#requests++;
    const answer = await this.api.listCalls(page, size);
    // Totals seen to state a page's own count are read as absent from then on (see totalIsPagesOwn).
    this.#totalsPerPage ||= totalIsPagesOwn(answer.entries, answer.pagination?.total, this.#distinct);
    const res = this.#totalsPerPage ? { ...answer, pagination: { ...answer.pagination, total: undefined } } : answer;
    this.#trail.see(pageMeta(res.pagination, res.entries.length).total, res.entries.length);
    return res;
  }

  /** The first page and how pages are numbered (see firstPages). */
  async #firstPages(): Promise<FirstPages<ListCallsPage>> {
    const first = await firstPages((page) => this.#list(page), 'sessionId');
    this.#pageBase = first.base;
    return first;
  }

  async *#pass(firstPass: boolean): AsyncGenerator<CallsPage, PassResult, undefined> {
    const end = new ListingEnd(this.#pageSize);
    this.#ties.startPass(this.#pageSize);
    // Ids seen in this pass: whether a page brought anything new (the union across passes is #distinct). The first pass's ids are
    // #distinct itself: a second set of the same ids cost 16 MB at a million calls, most of what a sync's peak memory grew by.
    const seenThisPass = firstPass ? undefined : new DistinctIds();
    // Pages read out of the forward walk: again in place, or backwards from the tail.
    const reader = pageReader((page) => this.#list(page), this.#order, this.#distinct, seenThisPass);
    const first = await this.#firstPages();
    const prefetched = new Map(first.pages.map((p) => [p.requested, p.res]));
    let requested: number = first.base;
    /** 0-based position of `requested` in the listing. */
    let index = 0;
    let furthest = -1;
    let previousIds: string[] | undefined;
    let previousTimes: EntryTimes[] = [];
    let continues = false;
    let previousTotal: number | undefined;
    let stepBacks = 0;
    /** Calls on a later pass's first page that came up from below the earlier one's (cameUp). */
    let movedIn = 0;
    let rose = 0;
    let above = 0;
    let entriesServed = 0;
    const falls = new FallCheck(this.#trail);
    // As many pages as `fell` calls fill, and one more: a total cached a request behind shows the fall
    // a page late (67 of 100 lost a call, ok: probe, session 24). A few times a pass at most.
    const pagesBack = (fell: number): number => Math.min(index, Math.ceil(fell / Math.max(1, end.largestPage)) + 1);
    const stepBack = (back: number, fell: number, newGround: boolean): void => {
      stepBacks++;
      index -= back;
      requested -= back;
      falls.steppedBack(index, back, fell, newGround);
      previousIds = undefined;
      continues = false;
    };
    let pagesWithoutNew = 0;
    let emptyAskedAgain = false;
    /** The listing's first page: its entries and reported total (see the offsets check below). */
    let first0: { count: number; total: number | undefined } | undefined;
    /** Index of the page jumped to when an oldest-first listing is read from its end (see below). */
    let jumpedTo: number | undefined;
    const startRequests = this.#requests - first.pages.length; // with the numbering's pages: a two-page listing counted one, never read twice (probe69)
    const finish = (why: string, stoppedEarly = false): PassResult => ({
      end, pages: this.#requests - startRequests, stoppedEarly, why,
      distinct: (seenThisPass ?? this.#distinct).count,
      movedIn,
      rose,
      above,
      served: entriesServed,
    });
    // Pages capped at `served` with offsets by perPage: this pass ends, the listing is read again at that size.
    const resized = (served: number): PassResult => ({ ...finish(`pages of ${served} served, offsets stepping by the size asked`), resized: true });
    // The end of a listing read from its tail: go back from where it jumped to the window.
    const ended = (why: string): AsyncGenerator<CallsPage, PassResult, undefined> | PassResult =>
      jumpedTo === undefined ? finish(why) : readBackwards(jumpedTo, requested - index, this.opts.lowerBound!, finish, reader);

    for (;;) {
      const res = prefetched.get(requested) ?? (await this.#list(requested));
      prefetched.delete(requested);
      const meta = pageMeta(res.pagination, res.entries.length);
      if (index === 0 && res.entries.length > 0) first0 = { count: res.entries.length, total: meta.total };
      // A capped first page: the second, asked again at the size served, must be the same page
      // (servedSizeToCheck), exactly (a tolerance for arrivals let a cap of 70 for 100 through,
      // round 10 F1): a call arriving in between costs a listing read at the served size, never a call.
      const served = index === 1 && jumpedTo === undefined && !this.#sizeChecked ? servedSizeToCheck(first0, this.#pageSize) : undefined;
      if (served !== undefined && !(await this.#offsetsFollowServed(requested, res, served))) return resized(served);

      if (res.entries.length === 0) {
        const d = end.afterEmpty(index, meta);
        // `total` fell before an empty page: the removal moved the last calls up onto a page read, and
        // the empty page looked like the end (the removed call, counted, made up the count: 1 of 50 lost).
        const fell = previousTotal !== undefined && meta.total !== undefined && meta.total > 0 && index > 0 && jumpedTo === undefined ? previousTotal - meta.total : 0;
        if (fell > 0) {
          const back = pagesBack(fell);
          previousTotal = meta.total;
          if (stepBacks < MAX_STEP_BACKS) {
            stepBack(back, fell, index > furthest);
            continue;
          }
          yield* readAgain(requested - back, requested, reader);
        }
        if (d.kind === 'end') {
          const e = ended(d.why);
          return 'end' in e ? e : yield* e;
        }
        // The figures say more follows: ask this page once more, then look at the one after it
        // (an empty page in the middle is a glitch, not the end).
        if (!emptyAskedAgain) {
          emptyAskedAgain = true;
          continue;
        }
        emptyAskedAgain = false;
        const peek = await this.#list(requested + 1);
        if (peek.entries.length === 0) {
          const e = ended('an empty page, asked twice, and the page after it empty too');
          return 'end' in e ? e : yield* e;
        }
        end.emptyFollowed(index);
        prefetched.set(requested + 1, peek);
        index++;
        requested++;
        continues = false;
        continue;
      }
      emptyAskedAgain = false;

      const ids = entryIds(res.entries, 'sessionId');
      const times = res.entries.map(entryTimes);
      const total = meta.total;
      const drop = previousTotal !== undefined && total !== undefined && index > 0 ? previousTotal - total : 0;
      falls.read(index, { ids, times }, drop, furthest);
      const repeats = sameIds(previousIds, ids);
      // `total` rose since the page before: arrivals above the cursor push calls down (the page repeats
      // them); the rest arrived below it, and one can hide a call a split of ties skipped (458 of 4,000).
      const up = continues && previousIds && previousTotal !== undefined && meta.total !== undefined ? meta.total - previousTotal : 0;
      if (up > 0 && !repeats) {
        const pushed = Math.min(up, riseAbove({ ids: previousIds!, times: previousTimes }, { ids, times }, this.#order.sortedBy?.key));
        above += pushed;
        rose += up - pushed;
      }
      let fresh = 0;
      if (index === 0 && seenThisPass && jumpedTo === undefined && this.#first) movedIn = cameUp(this.#first, { ids, times }, (id) => this.#distinct.has(id), this.#order.sortedBy);
      if (!repeats) {
        ids.forEach((id, i) => {
          const isNew = this.#distinct.add(id);
          if (seenThisPass ? seenThisPass.add(id) : isNew) fresh++;
          // A call a later pass finds was missed by the first, unless it arrived since.
          if (firstPass) this.#firstPassTimes.see(times[i]!);
          else if (isNew && this.#firstPassTimes.older(times[i]!, this.#order.sortedBy?.key)) this.#missed++;
        });
      }
      if (!repeats) this.#order.observe(times, continues);

      const decision = end.afterPage({ index, count: res.entries.length, meta, repeatsPrevious: repeats, overlapsPrevious: !repeats && overlapsPrevious(previousIds, ids) }, this.#seenForEnd(jumpedTo));
      if (decision.kind === 'broken') throw new ListingError(decision.why);
      if (decision.kind === 'end' && repeats) {
        const e = ended(decision.why);
        return 'end' in e ? e : yield* e;
      }

      // Pages re-read after stepping back bring nothing new by design; only new ground counts.
      const newGround = index > furthest;
      if (newGround && !repeats) this.#ties.page(ids, times, continues); // windows, and listings without a total (listingVerdict)
      if (newGround) {
        if (!repeats) entriesServed += ids.length;
        pagesWithoutNew = fresh === 0 ? pagesWithoutNew + 1 : 0;
        furthest = index;
        if (pagesWithoutNew >= MAX_PAGES_WITHOUT_NEW) {
          throw new ListingError(`List Calls pages ${index - MAX_PAGES_WITHOUT_NEW + 2}–${index + 1} brought no call not already listed; the paging is looping, so the listing cannot be proved complete`);
        }
      }
      previousIds = ids;
      previousTimes = times;
      if (index === 0 && jumpedTo === undefined) this.#first = { ids, times };
      yield { page: requested, entries: res.entries, pagination: res.pagination };

      // `total` fell: calls were removed above the cursor, and later ones moved up onto pages already
      // read (handled below). Also on the last page: ended there, one removal lost the call it moved
      // up while the removed one, counted, made the distinct count the new total (round 17 c).
      if (decision.kind === 'end' && !(drop > 0 && stepBacks < MAX_STEP_BACKS)) {
        const e = ended(decision.why);
        return 'end' in e ? e : yield* e;
      }
      if (olderThanWindow(times, this.opts.lowerBound, this.#order.sortedBy?.order)) return finish('a page older than the window (newest first observed)', true);

      // Oldest first with a window: the newest calls are at the end. Jump to the last page the
      // service reports, read forward from there to the proven end, then backwards to the window.
      const bound = this.opts.lowerBound;
      if (index === 0 && jumpedTo === undefined && bound !== undefined && this.#order.sortedBy?.order === 'oldest-first' && allOlder(times, bound)) {
        const lastPages = meta.totalPages ?? (meta.total !== undefined ? Math.ceil(meta.total / Math.max(1, res.entries.length)) : undefined);
        if (lastPages !== undefined && lastPages > 3) {
          // A capped first page is checked before the jump skips page 2, where the check is made
          // otherwise (the tail read at offsets by perPage lost 30 of 40 new calls, ok: round 11 F2).
          const served = this.#sizeChecked ? undefined : servedSizeToCheck(first0, this.#pageSize);
          if (served !== undefined && !(await this.#offsetsFollowServed(requested + 1, await this.#list(requested + 1), served))) return resized(served);
          jumpedTo = lastPages - 1;
          requested += jumpedTo - index;
          index = jumpedTo;
          previousIds = undefined;
          continues = false;
          continue;
        }
      }

      const back = pagesBack(drop);
      if (drop > 0 && stepBacks >= MAX_STEP_BACKS) {
        // Past that, the pages the moved calls now lie on are read again in place, and paging goes on
        // from here: the calls a removal moved up onto them are listed (paging forward alone lost them
        // while the removed calls, counted, made the distinct count reach the new total: a hostile
        // fake, 2026-11-26). A total merely wrong costs a request or two a page. Removals before every
        // request, re-reads included, can still move a call past them unseen (a known gap).
        falls.steppedBack(index - back, back, drop, newGround);
        yield* readAgain(requested - back, requested, { ...reader, record: (ids, times, page) => (reader.record(ids, times, page), falls.read(index + page - requested, { ids, times }, 0, furthest)) });
      }
      if (drop > 0 && stepBacks < MAX_STEP_BACKS) {
        previousTotal = total;
        stepBack(back, drop, newGround);
        continue;
      }
      if (total !== undefined) previousTotal = total;
      index++;
      requested++;
      continues = true;
    }
  }

  /** Reads the first page again after a pass (one request): calls moved up onto it (cameUp), and calls no pass listed. */
  async *#firstAgain(): AsyncGenerator<CallsPage, FirstAgain, undefined> {
    return this.#first ? yield* readFirstAgain((page) => this.#list(page), this.#pageBase, this.#first, this.#distinct, this.#order.sortedBy) : { moved: 0, fresh: 0 };
  }

  /** The distinct count the end rules hold against `total` (a listing read from its tail skipped pages: only `total_pages` tells its end). */
  #seenForEnd(jumpedTo: number | undefined): number {
    return jumpedTo === undefined ? this.#distinct.count : Number.MAX_SAFE_INTEGER;
  }
}
