import type { AppDataset } from './dataset.js';
import { entryIndex, withDuplicates } from './list-duplicates.js';
import { ListingOrder } from './listing-order.js';
import { hash3, Rng, Salt, unitHash } from './prng.js';
import { PageGeometry, shownPagination } from './quirks.js';
import type { FaultProfile } from './types.js';

/** perPage default of the list endpoints (api-seed.md §4.1; api-facts.md for List Calls). */
export const DEFAULT_PER_PAGE = 100;

/** Per-app List Calls state: once-only faults and the quirk path's per-request counters. */
export interface ListingState {
  /** Once-only faults already fired since the profile was set. */
  once: { inserted: boolean; removed: boolean; emptied: boolean; liveEnded: boolean };
  order: ListingOrder;
  /** List requests since the profile was set (seeds the per-request draws). */
  requests: number;
  /** quirks.total 'falling': requests since the last first-page request. */
  fallSteps: number;
}

export function newListingState(): ListingState {
  return { once: { inserted: false, removed: false, emptied: false, liveEnded: false }, order: new ListingOrder(), requests: 0, fallSteps: 0 };
}

export function intParam(params: URLSearchParams, name: string, fallback: number): number {
  const raw = params.get(name);
  if (raw === null || raw === '') return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 ? n : fallback;
}

/** The page number as the service reads it: with base 0, anything but a positive integer is page 0. */
function pageParam(params: URLSearchParams, base: 0 | 1): number {
  if (base === 1) return intParam(params, 'page', 1);
  const n = Number(params.get('page') ?? '');
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

function bodyOf(ds: AppDataset, indices: readonly number[], pagination: object): string {
  let body = '{"data":[';
  for (let k = 0; k < indices.length; k++) {
    if (k > 0) body += ',';
    const e = indices[k] ?? 0;
    // A negative entry is the second listing of a duplicated call (list-duplicates.ts).
    body += e >= 0 ? ds.listEntryJson(e) : ds.listEntryJson(entryIndex(e), 'B');
  }
  return `${body}],"meta":{"pagination":${JSON.stringify(pagination)}}}`;
}

/**
 * GET /calls. Without quirks and overlays this is the plain listing (newest first by index, no
 * per-request work proportional to the dataset: the benchmark's path). Otherwise the quirk path
 * serves a materialised order (listing-order.ts).
 */
export function listCalls(ds: AppDataset, st: ListingState, params: URLSearchParams, f: FaultProfile, maxPerPage: number): string {
  if (f.quirks === undefined && !ds.overlays.active && !ds.details.duplicates) return plainListCalls(ds, st, params, f, maxPerPage);
  return quirkListCalls(ds, st, params, f, maxPerPage);
}

function plainListCalls(ds: AppDataset, st: ListingState, params: URLSearchParams, f: FaultProfile, maxPerPage: number): string {
  const page = intParam(params, 'page', 1);
  const perPage = Math.min(intParam(params, 'perPage', DEFAULT_PER_PAGE), maxPerPage);
  const total = ds.visibleCount;
  const totalPages = Math.ceil(total / perPage);

  let indices: number[];
  if (f.repeatPageForever) indices = ds.listSlice(0, perPage);
  else if (f.emptyPageAt === page && !st.once.emptied) {
    st.once.emptied = true;
    indices = [];
  } else {
    // Pages are offsets into the current listing: changes between requests shift them, as on a
    // live service (see insertWhilePaging / removeWhilePaging).
    indices = ds.listSlice((page - 1) * perPage, perPage);
  }
  let shownTotal = total;
  let shownPages = totalPages;
  if (f.lieTotalPages === 'low') {
    shownTotal = Math.ceil(total / 3);
    shownPages = Math.ceil(totalPages / 3);
  } else if (f.lieTotalPages === 'high') {
    shownTotal = total * 3;
    shownPages = totalPages * 3;
  }
  const pagination = f.omitPerPage
    ? { total: shownTotal, count: indices.length, current_page: page, total_pages: shownPages }
    : { total: shownTotal, count: indices.length, per_page: perPage, current_page: page, total_pages: shownPages };
  const body = bodyOf(ds, indices, pagination);

  if (f.insertWhilePaging && page === f.insertWhilePaging.afterPage && !st.once.inserted) {
    st.once.inserted = true;
    ds.addNewest(f.insertWhilePaging.count);
  }
  if (f.removeWhilePaging && page === f.removeWhilePaging.afterPage && !st.once.removed) {
    st.once.removed = true;
    ds.removeListed(page * perPage, f.removeWhilePaging.count);
  }
  return body;
}

function quirkListCalls(ds: AppDataset, st: ListingState, params: URLSearchParams, f: FaultProfile, maxPerPage: number): string {
  const q = f.quirks ?? {};
  const asked = intParam(params, 'perPage', DEFAULT_PER_PAGE);
  const size = Math.min(asked, maxPerPage, q.perPageCap ?? Number.POSITIVE_INFINITY);
  const pageNo = pageParam(params, q.pageBase ?? 1);
  /** 0-based page index; once-only faults and shortPages count from 1 (`k + 1`). */
  const k = q.pageBase === 0 ? pageNo : pageNo - 1;
  st.requests++;
  const seed = f.faultSeed ?? 1;
  const calls = st.order.order(ds, q, new Rng(hash3(seed, st.requests, Salt.listShuffle)));
  const geo = new PageGeometry(size, q.shortPages);
  // Duplicated calls are listed twice: pages hold entries, the reported total counts calls.
  const order = ds.details.duplicates ? withDuplicates(calls, geo, ds.details) : calls;
  const total = order.length;
  const totalPages = geo.pagesFor(total);
  const pageAt = (p: number): readonly number[] => {
    const offset = geo.offsetOf(p);
    return order.slice(offset, Math.min(total, offset + geo.sizeOf(p)));
  };

  let indices: readonly number[];
  if (f.repeatPageForever) indices = pageAt(0);
  else if (f.emptyPageAt === k + 1 && !st.once.emptied) {
    st.once.emptied = true;
    indices = [];
  } else if (geo.offsetOf(k) < total) indices = pageAt(k);
  // A server that clamps `page` answers past the end with its last page.
  else if (q.pastEnd === 'repeat-last' && total > 0) indices = pageAt(totalPages - 1);
  else indices = [];

  if (k === 0) st.fallSteps = 0;
  const pagination = shownPagination(q, f, {
    total: calls.length, count: indices.length, size, asked, page: pageNo, totalPages, fallSteps: st.fallSteps, jitter: unitHash(seed, st.requests, Salt.totalJitter),
  });
  st.fallSteps++;
  const body = bodyOf(ds, indices, pagination);

  if (f.insertWhilePaging && k + 1 === f.insertWhilePaging.afterPage && !st.once.inserted) {
    st.once.inserted = true;
    ds.addNewest(f.insertWhilePaging.count);
  }
  if (f.removeWhilePaging && k + 1 === f.removeWhilePaging.afterPage && !st.once.removed) {
    st.once.removed = true;
    // Victims spread over what has been served so far, in the order served.
    const span = Math.min(total, geo.offsetOf(k + 1));
    const n = Math.min(f.removeWhilePaging.count, span);
    const victims: number[] = [];
    for (let j = 0; j < n; j++) victims.push(entryIndex(order[Math.floor(((j + 0.5) * span) / n)] ?? 0));
    ds.removeIndices(victims);
  }
  if (q.endLiveWhilePaging && k + 1 === q.endLiveWhilePaging.afterPage && !st.once.liveEnded) {
    st.once.liveEnded = true;
    ds.endRunning();
  }
  return body;
}
