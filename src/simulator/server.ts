import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { AppDataset } from './dataset.js';
import { detailGetReply } from './detail-get.js';
import { errorBody, htmlErrorBody } from './error-body.js';
import { DEFAULT_STALL_MS, FaultDice, type FaultRoll, validateFaults } from './faults.js';
import { DEFAULT_PER_PAGE, intParam, listCalls, type ListingState, newListingState } from './list-calls.js';
import { RATE_WINDOW_MS, SlidingWindow } from './rate-window.js';
import { parseRequestTarget, type RequestTarget } from './routes.js';
import { emptyStats } from './stats.js';
import type { FaultProfile, SimAppSpec, SimStats } from './types.js';

/** List Group Members perPage maximum, api-seed.md §8. */
const MAX_MEMBERS_PER_PAGE = 1000;
/** Retry-After of a random (not window-caused) 429. */
const RANDOM_429_RETRY_MS = 1000;
const SERVER_ERROR_STATUSES: readonly number[] = [500, 502, 503];
const NO_FAULT: FaultRoll = { fault: 'none', stall: false, truncate: false };
const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

/** Per-app state the handler needs besides the dataset. */
export interface AppRuntime {
  spec: SimAppSpec;
  dataset: AppDataset;
  stats: SimStats;
  window: SlidingWindow | null;
  /** List Calls state: once-only faults fired, the quirk path's order cache and counters. */
  listing: ListingState;
  limitHeaders: readonly [limit: string, remaining: string, reset: string];
}

export function rateLimitHeaderNames(style: SimAppSpec['rateLimitHeaderStyle']): readonly [string, string, string] {
  // Both spellings are in CometChat's docs (api-facts.md, Rate limits).
  return style === 'X-Rate-Limit'
    ? ['X-Rate-Limit', 'X-Rate-Limit-Remaining', 'X-Rate-Limit-Reset']
    : ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
}

interface Reply {
  status: number;
  body: string;
  html?: boolean;
  /** Overrides the JSON/HTML content type (detail quirks). */
  contentType?: string;
  /** A redirect's target (detail quirk unusableGet 'redirect'). */
  location?: string;
  /** Milliseconds for a Retry-After header (429 only). */
  retryAfterMs?: number;
}

/**
 * The request handler: routing, auth, rate window, injected faults, and the four endpoints.
 * Nothing here logs or compiles regexes per request: the simulator is the benchmark's peer.
 */
export class SimulatorHandler {
  private seq = 0;
  private faults: FaultProfile = {};
  private dice = new FaultDice({});
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Requests that name no known app. */
  readonly orphanStats: SimStats = emptyStats();

  constructor(
    private readonly apps: ReadonlyMap<string, AppRuntime>,
    private readonly maxPerPage: number,
  ) {}

  /** Replaces the fault profile: re-selects faulty calls, resets windows and once-only faults. */
  setFaults(profile: FaultProfile): void {
    validateFaults(profile);
    this.faults = { ...profile };
    this.dice = new FaultDice(this.faults);
    for (const app of this.apps.values()) {
      app.dataset.selectFaultyCalls(profile.notFoundCalls ?? 0, profile.malformedCalls ?? 0);
      app.dataset.applyQuirks(profile.quirks);
      app.dataset.applyDetailQuirks(profile.details);
      app.window = profile.rateLimitPerMinute ? new SlidingWindow(profile.rateLimitPerMinute, profile.rateLimitWindowSeconds === undefined ? RATE_WINDOW_MS : profile.rateLimitWindowSeconds * 1000) : null;
      app.listing = newListingState();
    }
  }

  /** Drops delayed answers (close()): their sockets are destroyed with the server. */
  dropPending(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const seq = this.seq++;
    const target = parseRequestTarget(req.url ?? '/');
    if (target === null) {
      this.orphanStats.requests++;
      this.orphanStats.other++;
      this.send(res, null, this.error(404, 'ERR_NOT_FOUND', 'No such endpoint: use {appId}.call-{region}/v3 or {appId}.api-{region}/v3', seq), 0, false);
      return;
    }
    const app = this.apps.get(target.appId);
    if (app === undefined || app.spec.region !== target.region) {
      this.orphanStats.requests++;
      this.orphanStats.auth++;
      const reply = target.appId === ''
        ? this.error(404, 'AUTH_ERR_EMPTY_APPID', 'The appId is missing from the host', seq)
        : this.error(404, 'AUTH_ERR_INVALID_APPID', `Unknown appId or region in ${target.appId}.${target.api === 'calls' ? 'call' : 'api'}-${target.region}: check the app's id and region`, seq);
      this.send(res, null, reply, 0, false);
      return;
    }
    const stats = app.stats;
    stats.requests++;
    stats[target.kind]++;
    const nowMs = Date.now();
    const latency = this.faults.latencyMs ?? 0;

    const authError = this.checkAuth(app, req, seq);
    if (authError !== null) {
      stats.auth++;
      app.window?.peek(nowMs);
      this.send(res, app, authError, latency, false);
      return;
    }
    if (app.spec.unavailableRequests !== undefined && stats.requests <= app.spec.unavailableRequests) {
      stats.http5xx++;
      this.send(res, app, { status: 503, body: htmlErrorBody(503), html: true }, latency, false);
      return;
    }
    if (app.window !== null && !app.window.admit(nowMs)) {
      stats.http429++;
      const reply = this.error(429, 'ERR_TOO_MANY_REQUESTS', 'Rate limit exceeded: retry after the Retry-After delay', seq, true);
      reply.retryAfterMs = app.window.retryAfterMs;
      this.send(res, app, reply, latency, false);
      return;
    }

    const roll = this.dice.hasRandomFaults ? this.dice.roll() : NO_FAULT;
    if (roll.fault === 'reset') {
      stats.reset++;
      req.socket.resetAndDestroy();
      return;
    }
    let reply: Reply;
    if (roll.fault === '429') {
      stats.http429++;
      reply = this.error(429, 'ERR_TOO_MANY_REQUESTS', 'Too many requests: retry after the Retry-After delay', seq, true);
      reply.retryAfterMs = RANDOM_429_RETRY_MS;
    } else if (roll.fault === '5xx') {
      stats.http5xx++;
      const status = SERVER_ERROR_STATUSES[seq % SERVER_ERROR_STATUSES.length] ?? 502;
      reply = { status, body: htmlErrorBody(status), html: true };
    } else {
      reply = req.method === 'GET' ? this.route(app, target, seq) : this.error(404, 'ERR_NOT_FOUND', `${req.method ?? ''} is not served: the API is read-only here (GET)`, seq);
    }
    let delay = latency;
    if (roll.stall) {
      stats.stall++;
      delay += this.faults.stallMs ?? DEFAULT_STALL_MS;
    }
    const truncate = roll.truncate && reply.status === 200;
    if (truncate) stats.truncate++;
    this.send(res, app, reply, delay, truncate);
  };

  private checkAuth(app: AppRuntime, req: IncomingMessage, seq: number): Reply | null {
    const key = req.headers.apikey;
    if (key === undefined || key === '' || (Array.isArray(key) && key.length === 0)) {
      return this.error(401, 'AUTH_ERR_EMPTY_APIKEY', 'The apikey header is missing: send the app\'s REST API key in it', seq);
    }
    if (key !== app.spec.apiKey) {
      return this.error(401, 'AUTH_ERR_APIKEY_NOT_FOUND', 'The API key is not valid for this app: check the key in the dashboard', seq);
    }
    if (app.spec.keyScope === 'readOnly') {
      return this.error(403, 'AUTH_ERR_NO_ACCESS', 'The API key lacks fullAccess scope: use a fullAccess REST API key', seq);
    }
    return null;
  }

  private route(app: AppRuntime, target: RequestTarget, seq: number): Reply {
    switch (target.kind) {
      case 'list':
        return { status: 200, body: listCalls(app.dataset, app.listing, new URLSearchParams(target.query), this.faults, this.maxPerPage) };
      case 'get':
        return this.getCall(app, target, seq);
      case 'members':
        return this.listMembers(app, target, seq);
      case 'stats':
        return this.usageStats(app, new URLSearchParams(target.query), seq);
      default:
        return this.error(404, 'ERR_NOT_FOUND', 'No such endpoint on this API base', seq);
    }
  }

  private getCall(app: AppRuntime, target: RequestTarget, seq: number): Reply {
    if (target.badParam) return this.error(400, 'ERR_BAD_REQUEST', 'The sessionId is not valid percent-encoding: encode it with encodeURIComponent', seq);
    if (target.param === '') return this.error(400, 'ERR_EMPTY_CALL_SESSION_ID', 'The sessionId is missing from the path', seq);
    const index = app.dataset.findIndex(target.param);
    const imposed = index !== null && app.dataset.details.active ? detailGetReply(app.dataset, index) : null;
    if (imposed !== null && imposed !== 'not-found') return imposed;
    const body = index === null || imposed === 'not-found' ? null : app.dataset.getCallBody(index);
    if (body === null) {
      app.stats.notFound++;
      return this.error(404, 'ERR_CALL_SESSION_NOT_FOUND', `The call session ${target.param} does not exist`, seq);
    }
    return { status: 200, body };
  }

  private listMembers(app: AppRuntime, target: RequestTarget, seq: number): Reply {
    const groups = app.dataset.groups;
    const k = target.badParam ? null : groups.groupNumber(target.param);
    if (k === null || groups.isDeleted(k)) {
      app.stats.notFound++;
      return this.error(404, 'ERR_GUID_NOT_FOUND', `The group ${target.param} does not exist`, seq);
    }
    const params = new URLSearchParams(target.query);
    const page = intParam(params, 'page', 1);
    const perPage = Math.min(intParam(params, 'perPage', DEFAULT_PER_PAGE), MAX_MEMBERS_PER_PAGE);
    const status = params.get('status');
    const scopesText = params.get('scopes');
    const scopes = scopesText ? new Set(scopesText.split(',').map((s) => s.trim()).filter((s) => s !== '')) : null;
    const { members, json } = groups.members(k);
    let selected: number[] | null = null;
    if ((status === 'available' || status === 'offline') || (scopes && scopes.size > 0)) {
      selected = [];
      members.forEach((m, j) => {
        if ((status === 'available' || status === 'offline') && m.status !== status) return;
        if (scopes && scopes.size > 0 && !scopes.has(m.scope)) return;
        selected?.push(j);
      });
    }
    const total = selected ? selected.length : members.length;
    const start = (page - 1) * perPage;
    const end = Math.min(total, start + perPage);
    let body = '{"data":[';
    let latest = 0;
    for (let pos = start; pos < end; pos++) {
      const j = selected ? (selected[pos] ?? 0) : pos;
      if (pos > start) body += ',';
      body += json[j] ?? '{}';
      const m = members[j];
      if (m) latest = Math.max(latest, m.updatedAt ?? m.joinedAt);
    }
    const count = Math.max(0, end - start);
    const pagination = JSON.stringify({ total, count, per_page: perPage, current_page: page, total_pages: Math.ceil(total / perPage) });
    const cursor = JSON.stringify({ updatedAt: latest || app.dataset.ctx.now, affix: 'prepend' });
    // The endpoint example puts `cursor` at the top level, the API overview under `meta`.
    body += (page + k) % 2 === 0
      ? `],"meta":{"pagination":${pagination}},"cursor":${cursor}}`
      : `],"meta":{"pagination":${pagination},"cursor":${cursor}}}`;
    return { status: 200, body };
  }

  private usageStats(app: AppRuntime, params: URLSearchParams, seq: number): Reply {
    const from = parseTimestamp(params.get('fromDate'), 0);
    const to = parseTimestamp(params.get('toDate'), app.dataset.ctx.now + 365 * 86_400);
    if (from === null || to === null) {
      return this.error(400, 'ERR_BAD_REQUEST', 'fromDate and toDate must be unix timestamps (seconds or milliseconds)', seq);
    }
    const m = app.dataset.usageMetrics(from, to);
    const body = JSON.stringify({
      data: {
        metrics: {
          audio_minutes: m.audioMinutes,
          video_minutes: m.videoMinutes,
          recorded_minutes: m.recordedMinutes,
          active_users: m.activeUsers,
          concurrent_users: m.concurrentUsers,
        },
        time_range: { fromDate: Math.round(from * 1000), toDate: Math.round(to * 1000) },
      },
    });
    return { status: 200, body };
  }

  private error(status: number, code: string, message: string, seq: number, forceWrapped = false): Reply {
    return { status, body: errorBody(code, message, seq, forceWrapped) };
  }

  private send(res: ServerResponse, app: AppRuntime | null, reply: Reply, delayMs: number, truncate: boolean): void {
    const headers: OutgoingHttpHeaders = {
      'content-type': reply.contentType ?? (reply.html ? HTML_TYPE : JSON_TYPE),
      'content-length': Buffer.byteLength(reply.body),
    };
    if (reply.location !== undefined) headers.location = reply.location;
    const window = app?.window;
    if (app && window) {
      const [limit, remaining, reset] = app.limitHeaders;
      headers[limit] = window.limit;
      headers[remaining] = window.remaining;
      headers[reset] = Math.ceil(window.resetAtMs / 1000);
    }
    if (reply.retryAfterMs !== undefined) {
      const style = this.faults.retryAfter ?? 'seconds';
      if (style === 'seconds') headers['retry-after'] = String(Math.max(1, Math.ceil(reply.retryAfterMs / 1000)));
      else if (style === 'http-date') headers['retry-after'] = new Date(Math.ceil((Date.now() + reply.retryAfterMs) / 1000) * 1000).toUTCString();
    }
    const write = (): void => {
      if (res.destroyed || res.writableEnded) return;
      res.writeHead(reply.status, headers);
      if (!truncate) {
        res.end(reply.body);
        return;
      }
      const bytes = Buffer.from(reply.body);
      // Destroy only once the half body is flushed, so the client really sees a short body.
      res.write(bytes.subarray(0, bytes.length >> 1), () => res.socket?.destroy());
    };
    if (delayMs <= 0) {
      write();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      write();
    }, delayMs);
    this.timers.add(timer);
  }
}

/** Unix seconds from seconds or milliseconds (values > 1e11 are ms); null when not a number. */
function parseTimestamp(raw: string | null, fallback: number): number | null {
  if (raw === null || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) return null;
  return n > 1e11 ? n / 1000 : n;
}
