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
}

/** Misbehaviour to inject; everything is optional and off by default. */
export interface FaultProfile {
  /** A real sliding 60 s window per app: request N+1 within 60 s gets 429. */
  rateLimitPerMinute?: number;
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
}

export interface AdvanceResult {
  ended: string[];
  recorded: string[];
  added: string[];
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
  /** Closes the server and every keep-alive socket; pending stalls are dropped. */
  close(): Promise<void>;
}
