import type { ListingQuirks } from './types.js';

/** Allowed values of the enumerated quirks; also what an error message lists. */
const CHOICES = {
  order: ['newest-first', 'oldest-first', 'unsorted', 'shuffled'],
  perPageEcho: ['honest', 'requested', 'omit'],
  total: ['honest', 'omit', 'low', 'high', 'jitter', 'falling'],
  totalPages: ['honest', 'omit', 'low', 'high', 'requested-size'],
  currentPage: ['honest', 'omit'],
  pastEnd: ['empty', 'repeat-last'],
} as const satisfies Partial<Record<keyof ListingQuirks, readonly string[]>>;

const KNOWN_KEYS: ReadonlySet<string> = new Set<keyof ListingQuirks>([
  'order', 'pageBase', 'perPageCap', 'perPageEcho', 'total', 'totalPages', 'currentPage', 'pastEnd',
  'shortPages', 'startedAtZeroForUnstarted', 'futureCalls', 'equalStartedAt', 'endLiveWhilePaging',
]);

/** How far ahead futureCalls are put: 2 to 6 days after `now`. */
export const FUTURE_MIN_DAYS = 2;
export const FUTURE_SPREAD_DAYS = 5;
export const DEFAULT_LIVE_CALLS = 2;
export const DEFAULT_LIVE_STARTED_DAYS_AGO = 60;
/** 'falling': how much `total` drops on each request after a first-page request. */
export const FALL_PER_REQUEST = 2;
/** 'jitter': the reported total is off by up to this much either way. */
export const JITTER = 3;

function isInt(v: unknown, min: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min;
}

/** Throws on quirks that cannot mean anything, naming the field (same style as validateFaults). */
export function validateQuirks(q: ListingQuirks): void {
  const where = (k: string): string => `FaultProfile.quirks.${k}`;
  if (typeof q !== 'object' || q === null || Array.isArray(q)) throw new Error('FaultProfile.quirks must be an object');
  // A misspelt quirk would silently test nothing: refuse it.
  for (const k of Object.keys(q)) if (!KNOWN_KEYS.has(k)) throw new Error(`${where(k)} is not a listing quirk; known: ${[...KNOWN_KEYS].join(', ')}`);
  for (const [key, allowed] of Object.entries(CHOICES)) {
    const v = (q as Record<string, unknown>)[key];
    if (v !== undefined && !(allowed as readonly unknown[]).includes(v)) throw new Error(`${where(key)} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  }
  if (q.pageBase !== undefined && q.pageBase !== 0 && q.pageBase !== 1) throw new Error(`${where('pageBase')} must be 0 or 1, got ${JSON.stringify(q.pageBase)}`);
  if (q.perPageCap !== undefined && !isInt(q.perPageCap, 1)) throw new Error(`${where('perPageCap')} must be an integer >= 1, got ${q.perPageCap}`);
  if (q.futureCalls !== undefined && !isInt(q.futureCalls, 0)) throw new Error(`${where('futureCalls')} must be an integer >= 0, got ${q.futureCalls}`);
  for (const k of ['startedAtZeroForUnstarted', 'equalStartedAt'] as const) {
    if (q[k] !== undefined && typeof q[k] !== 'boolean') throw new Error(`${where(k)} must be true or false`);
  }
  if (q.shortPages !== undefined && (!Array.isArray(q.shortPages) || !q.shortPages.every((p) => isInt(p, 1)))) {
    throw new Error(`${where('shortPages')} must be an array of page numbers >= 1 (1 = the first page)`);
  }
  const live = q.endLiveWhilePaging;
  if (live !== undefined) {
    if (!isInt(live.afterPage, 1)) throw new Error(`${where('endLiveWhilePaging.afterPage')} must be an integer >= 1, got ${live.afterPage}`);
    if (live.liveCalls !== undefined && !isInt(live.liveCalls, 0)) throw new Error(`${where('endLiveWhilePaging.liveCalls')} must be an integer >= 0`);
    if (live.startedDaysAgo !== undefined && !(typeof live.startedDaysAgo === 'number' && live.startedDaysAgo > 0 && live.startedDaysAgo < 180)) {
      throw new Error(`${where('endLiveWhilePaging.startedDaysAgo')} must be a number of days in (0, 180)`);
    }
  }
}

/**
 * Where pages start and end: every page holds `size` entries except the `shortPages`, which hold
 * their first half; what they leave out starts the next page.
 */
export class PageGeometry {
  /** Sorted 0-based indices of the short pages. */
  private readonly short: number[];
  private readonly shortSize: number;

  constructor(readonly size: number, shortPages: readonly number[] | undefined) {
    this.short = [...new Set(shortPages ?? [])].map((p) => p - 1).sort((a, b) => a - b);
    this.shortSize = Math.max(1, Math.floor(size / 2));
  }

  /** Entries on 0-based page `k`. */
  sizeOf(k: number): number {
    return this.short.includes(k) ? Math.min(this.size, this.shortSize) : this.size;
  }

  /** Listing position of the first entry of 0-based page `k`. */
  offsetOf(k: number): number {
    let offset = k * this.size;
    for (const s of this.short) {
      if (s >= k) break;
      offset -= this.size - Math.min(this.size, this.shortSize);
    }
    return offset;
  }

  /** Pages needed to hold `total` entries. */
  pagesFor(total: number): number {
    let pages = Math.ceil(total / this.size);
    // Each short page pushes entries on; at most one more page per short page.
    while (this.offsetOf(pages) < total) pages++;
    return pages;
  }
}

/** JSON-ready meta.pagination, in the key order the plain listing uses. */
export interface PaginationShown {
  total?: number;
  count: number;
  per_page?: number;
  current_page?: number;
  total_pages?: number;
}

/** What the quirk path reports for one page, before the quirks bend it. */
export interface HonestMeta {
  total: number;
  count: number;
  size: number;
  asked: number;
  page: number;
  totalPages: number;
  /** 'falling': requests since the last first-page request; 'jitter': a draw in [0, 1). */
  fallSteps: number;
  jitter: number;
}

export function shownPagination(q: ListingQuirks, legacy: { lieTotalPages?: 'low' | 'high'; omitPerPage?: boolean }, m: HonestMeta): PaginationShown {
  const totalMode = q.total ?? legacy.lieTotalPages ?? 'honest';
  const pagesMode = q.totalPages ?? legacy.lieTotalPages ?? 'honest';
  const echo = q.perPageEcho ?? (legacy.omitPerPage ? 'omit' : 'honest');
  let total: number | undefined;
  switch (totalMode) {
    case 'omit':
      break;
    case 'low':
      total = Math.ceil(m.total / 3);
      break;
    case 'high':
      total = m.total * 3;
      break;
    case 'jitter':
      total = Math.max(0, m.total + Math.floor(m.jitter * (2 * JITTER + 1)) - JITTER);
      break;
    case 'falling':
      total = Math.max(0, m.total - FALL_PER_REQUEST * m.fallSteps);
      break;
    default:
      total = m.total;
  }
  // Key order as the plain listing writes it: total, count, per_page, current_page, total_pages.
  const out: PaginationShown = total === undefined ? { count: m.count } : { total, count: m.count };
  if (echo === 'honest') out.per_page = m.size;
  else if (echo === 'requested') out.per_page = m.asked;
  if (q.currentPage !== 'omit') out.current_page = m.page;
  switch (pagesMode) {
    case 'omit':
      break;
    case 'low':
      out.total_pages = Math.ceil(m.totalPages / 3);
      break;
    case 'high':
      out.total_pages = m.totalPages * 3;
      break;
    case 'requested-size':
      out.total_pages = Math.ceil(m.total / m.asked);
      break;
    default:
      out.total_pages = m.totalPages;
  }
  return out;
}
