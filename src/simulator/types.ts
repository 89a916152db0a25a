import type { AppTruth, TruthCall } from './truth.js';

export type Region = 'us' | 'eu' | 'in';

/** One simulated app; several share one server, told apart by the host-like first path segment. */
export interface SimAppSpec {
  appId: string;
  region: Region;
  apiKey: string;
  calls: number;
  /** Dataset seed (mixed with appId; default: appId alone). Same (appId, seed, calls, now) → identical data. */
  seed?: number;
  /** readOnly → every request answers 403 AUTH_ERR_NO_ACCESS (the API needs fullAccess). */
  keyScope?: 'fullAccess' | 'readOnly';
  /** The two documented spellings of the rate-limit headers (api-facts.md, Rate limits). */
  rateLimitHeaderStyle?: 'X-RateLimit' | 'X-Rate-Limit';
  /**
   * 'varied' (default): 5 % of List entries omit `participants`, as some list responses do, so
   * those calls need Get Call. 'complete': every final call's List entry is whole (the case the
   * requests-per-call target of the benchmark is about); live calls still need Get Call.
   */
  listEntries?: 'varied' | 'complete';
  /**
   * An outage of this app only: its first N requests answer 503 with an HTML body, later ones are
   * served. With the client's own retries off (maxAttempts 1), N failed sync attempts in a row.
   */
  unavailableRequests?: number;
}

/** Misbehaviour to inject; everything is optional and off by default. */
export interface FaultProfile {
  /** A real sliding 60 s window per app (rateLimitWindowSeconds changes its length): request N+1 within it gets 429. */
  rateLimitPerMinute?: number;
  /**
   * Length in seconds of the rateLimitPerMinute window (default 60, the service's): a shorter one
   * shows a client waiting out a whole window sooner (`rateLimitPerMinute` requests per this many seconds).
   */
  rateLimitWindowSeconds?: number;
  /** How 429 responses state Retry-After (default seconds). */
  retryAfter?: 'seconds' | 'http-date' | 'none';
  /** Probability of a random 429 ERR_TOO_MANY_REQUESTS. */
  http429Rate?: number;
  /** Probability of a 500/502/503 with an HTML body. */
  http5xxRate?: number;
  /** Probability of destroying the socket without answering. */
  resetRate?: number;
  /** Probability of sending 200, the headers and half the body, then destroying the socket. */
  truncateRate?: number;
  /** Probability of waiting stallMs (default 60000) before answering. */
  stallRate?: number;
  stallMs?: number;
  /** Added to every response. */
  latencyMs?: number;
  /** N listed calls whose Get Call answers 404 ERR_CALL_SESSION_NOT_FOUND (list entries lack participants). */
  notFoundCalls?: number;
  /** N calls whose List entry and Get body are malformed (wrong types), sessionId kept. */
  malformedCalls?: number;
  /** After List page `afterPage` is first served, `count` new newest calls appear. */
  insertWhilePaging?: { afterPage: number; count: number };
  /** After List page `afterPage` is first served, `count` calls listed on pages 1..afterPage vanish. */
  removeWhilePaging?: { afterPage: number; count: number };
  /** Every List page answers with page 1's content. */
  repeatPageForever?: boolean;
  /** meta.pagination total/total_pages understate (ceil(x/3)) or overstate (x*3) the truth. */
  lieTotalPages?: 'low' | 'high';
  /** This List page number answers `data: []` once, although more pages follow. */
  emptyPageAt?: number;
  /** meta.pagination without per_page. */
  omitPerPage?: boolean;
  /** Seed of the fault dice (default 1): same seed and request order → same faults. */
  faultSeed?: number;
  /** How List Calls pages, sorts and describes itself: the undocumented parts (README, Listing quirks). */
  quirks?: ListingQuirks;
  /** What list entries and Get Call answers hold, and how Get Call can fail to answer (README, Detail quirks). */
  details?: DetailQuirks;
}

/**
 * List Calls behaviours the documentation leaves open (api-facts.md), each switchable alone and
 * combinable. Unset means today's answer: newest first, pages from 1, honest meta. Page numbers in
 * `shortPages` and in the once-only faults are logical (1 = the first page, whatever `pageBase`).
 */
export interface ListingQuirks {
  /**
   * 'newest-first' (default, by startedAt); 'oldest-first'; 'unsorted': a fixed order by a hash of
   * the call, the same for every request; 'shuffled': a new order on every request (cannot be paged
   * reliably, only noticed).
   */
  order?: 'newest-first' | 'oldest-first' | 'unsorted' | 'shuffled';
  /** 0: page=0 is the first page, page=1 the second, current_page echoes the 0-based number. Default 1. */
  pageBase?: 0 | 1;
  /** Pages carry at most this many entries whatever perPage asks (a server-side cap). */
  perPageCap?: number;
  /** meta.pagination.per_page: the real size (default), the perPage asked even when capped, or absent. */
  perPageEcho?: 'honest' | 'requested' | 'omit';
  /**
   * meta.pagination.total: 'low' ceil(x/3), 'high' x*3, 'jitter' honest ± up to 3 per request
   * (seeded), 'falling' honest minus 2 more on every request since the last first-page request.
   */
  total?: 'honest' | 'omit' | 'low' | 'high' | 'jitter' | 'falling';
  /** meta.pagination.total_pages; 'requested-size' is computed from the perPage asked, not the page size served. */
  totalPages?: 'honest' | 'omit' | 'low' | 'high' | 'requested-size';
  currentPage?: 'honest' | 'omit';
  /** Pages past the end: 'empty' (default) or the last real page again (current_page echoes the page asked). */
  pastEnd?: 'empty' | 'repeat-last';
  /**
   * These logical pages (1-based) carry only the first half of their entries; the rest move on to
   * later pages (the page boundary really is earlier), so paging to the end still sees every call.
   */
  shortPages?: number[];
  /** Calls that never started (every status but ended/ongoing) carry startedAt 0; their truth startedAt is null. */
  startedAtZeroForUnstarted?: boolean;
  /** N answered calls carry times days after the dataset's now (a clock error); they sort as their startedAt says. */
  futureCalls?: number;
  /** Small groups of calls share one startedAt; their order within the group changes on every request. */
  equalStartedAt?: boolean;
  /**
   * Running calls are listed first (the service orders by `endedAt ?? now`, a live call counting as
   * newest); after logical page `afterPage` is first served, every running call ends and drops to its
   * startedAt place, shifting the calls between. `liveCalls` (default 2) long calls that started
   * `startedDaysAgo` (default 60) days ago are running until then, so the drop crosses pages.
   */
  endLiveWhilePaging?: { afterPage: number; liveCalls?: number; startedDaysAgo?: number };
}

/**
 * How Get Call answers a call it cannot give ('error-body-200' carries `errorCode`, default
 * ERR_CALL_SESSION_NOT_FOUND; 'redirect' is a 302 to another host).
 */
export type UnusableGetAnswer =
  | 'empty-object'
  | 'null'
  | 'empty-array'
  | 'no-session-id'
  | 'other-session'
  | 'html-200'
  | 'non-json-200'
  | 'error-body-200'
  | 'redirect';

/** `calls` listed calls whose list entry is incomplete and whose Get Call answers `answer`. */
export interface UnusableGetSpec {
  calls: number;
  answer: UnusableGetAnswer;
  /** The code of 'error-body-200' (default ERR_CALL_SESSION_NOT_FOUND; e.g. ERR_TOO_MANY_REQUESTS). */
  errorCode?: string;
  /** 'forever' (default), or k >= 2: the k-th Get Call request for the call and later ones answer properly. */
  until?: 'forever' | number;
}

/**
 * What list entries and Get Call answers hold: the shapes the documentation permits but no
 * example shows (api-facts.md), and the ways Get Call fails to answer. Each is switchable alone and
 * combinable; each affected call carries one of them at most (`sim.detailQuirkCalls()` names them).
 * Unset, List and Get answer byte for byte as without them.
 */
export interface DetailQuirks {
  /** Every List entry leaves minutes out (participants without minutes, call totals absent, or both); Get Call answers the whole call. */
  summaryListEntries?: boolean;
  /** Calls whose Get Call answers something unusable (several specs pick disjoint calls). */
  unusableGet?: UnusableGetSpec | UnusableGetSpec[];
  /** Ended calls whose recordings, minutes or endedAt appear only at advance({ settleLateDetails }); their List entry never changes. */
  lateDetails?: { calls: number };
  /** Calls with one participant whose uid is absent (alternately '' ); the truth has uid ''. */
  participantsWithoutUid?: number;
  /** Calls without `type` (truth null), plus one without `status` (truth null) and one of type 'screenshare'. */
  callsWithoutType?: number;
  /** Calls with a negative participant minute figure, and calls with minutes far beyond the wall clock (or over 24 h). */
  implausibleMinutes?: { negative?: number; huge?: number };
  /** Live calls whose next 2 Get Call requests answer ERR_CALL_SESSION_NOT_FOUND; they end at advance({ endOngoing }). */
  liveBrieflyNotFound?: number;
  /** Calls stuck `initiated`, initiated 10+ days before now; nothing ever ends them. */
  stuckInitiated?: number;
  /** hasTranscription/transcriptions on some ended calls, and metaData/tags in variants on every call. */
  transcriptions?: boolean;
  /** Calls listed twice (same or next page), each entry with part of the participants; Get Call answers the whole call. */
  duplicateEntries?: number;
}

/** The calls each detail quirk affects (chosen at setFaults), by sessionId. */
export interface DetailQuirkCalls {
  /** Per spec of `unusableGet`, in the order given. */
  unusableGet: string[][];
  lateDetails: string[];
  /** Whether advance({ settleLateDetails }) has run since setFaults. */
  lateDetailsSettled: boolean;
  participantsWithoutUid: { absent: string[]; empty: string[] };
  callsWithoutType: { noType: string[]; noStatus: string[]; unknownType: string[] };
  implausibleMinutes: { negative: string[]; huge: string[] };
  liveBrieflyNotFound: string[];
  stuckInitiated: string[];
  duplicateEntries: string[];
  /** Calls with hasTranscription true (transcriptions quirk). */
  transcribed: string[];
  /** Get Call requests each affected call has had since setFaults (answered requests only, not 429s or faults). */
  gets: Map<string, number>;
}

export interface SimulatorOptions {
  apps: SimAppSpec[];
  faults?: FaultProfile;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** List Calls perPage cap (default 1000). */
  maxPerPage?: number;
  /** Unix seconds of the dataset's "now" (default 1764547200, 2025-12-01T00:00:00Z). */
  now?: number;
}

/** Request counters; kinds count every routed request of the app, whatever its outcome. */
export interface SimStats {
  requests: number;
  list: number;
  get: number;
  members: number;
  stats: number;
  /** Requests to no known endpoint. */
  other: number;
  http429: number;
  http5xx: number;
  reset: number;
  truncate: number;
  stall: number;
  /** 404 answers for unknown calls and groups (ERR_CALL_SESSION_NOT_FOUND, ERR_GUID_NOT_FOUND). */
  notFound: number;
  /** 401/403 answers and unknown appIds. */
  auth: number;
}

export interface AdvanceOptions {
  /** Running (initiated/ongoing) calls end. */
  endOngoing?: boolean;
  /** Recordings appear on up to this many ended calls of the newest 24 h that had none. */
  addRecordings?: number;
  /** This many new calls appear at the newest end. */
  newCalls?: number;
  /**
   * Late calls: `count` finished calls appear now although they started `hoursAgo` hours before
   * `now` (one a minute apart, older ones after), i.e. below calls already listed. hoursAgo >= 2
   * keeps them ended before `now`.
   */
  backdatedCalls?: { count: number; hoursAgo: number };
  /**
   * A long call that the listing hid while it ran appears now, ended a minute before `now`, with
   * its startedAt `startedDaysAgo` days back. It is in the truth only from now on.
   */
  revealLongCall?: { startedDaysAgo: number };
  /** The late details of `details.lateDetails` calls appear (Get Call and the truth; their List entries stay as they were). */
  settleLateDetails?: boolean;
}

export interface AdvanceResult {
  ended: string[];
  recorded: string[];
  added: string[];
  /** backdatedCalls, newest first. */
  backdated: string[];
  revealed: string[];
  /** settleLateDetails: the calls whose details appeared. */
  settled: string[];
}

export interface Simulator {
  /** http://HOST:PORT */
  url: string;
  /** Both end in /v3. */
  baseUrls(appId: string): { callsBaseUrl: string; chatBaseUrl: string };
  /** Replaces the fault profile (and re-arms the once-only faults). */
  setFaults(f: FaultProfile): void;
  /** Counters of one app, or of the whole server (including requests naming no known app). */
  stats(appId?: string): SimStats;
  resetStats(): void;
  /** Current ground truth. Builds every call: fine up to ~100k calls, use truthCalls() beyond. */
  truth(appId: string): AppTruth;
  /** The truth's calls one at a time, newest first, without holding them all. */
  truthCalls(appId: string): IterableIterator<TruthCall>;
  advance(appId: string, opts: AdvanceOptions): AdvanceResult;
  /** Which calls each detail quirk affects, and their Get Call request counts. */
  detailQuirkCalls(appId: string): DetailQuirkCalls;
  /** Closes the server and every keep-alive socket; pending stalls are dropped. */
  close(): Promise<void>;
}
