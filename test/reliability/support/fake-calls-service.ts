import { readFileSync } from 'node:fs';
import { seededRandom } from './prng.js';
import { startServer, type Reply, type TestServer } from './servers.js';

/**
 * An independent fake of the Calls API (List Calls, Get Call) and of List Group Members, written
 * from the documentation, NOT from the bundled simulator: every assumption a client could make
 * about paging (order, page base, page size, the meta fields, the end of the listing) and about
 * times can be broken on purpose, in ways the docs allow. It holds its own truth (`calls`).
 */
export interface FakeOptions {
  calls?: number;
  seed?: number;
  /**
   * Listing order: by initiatedAt, by sessionId, or a fresh shuffle on every request; `startedNullsLast`:
   * newest first by startedAt, calls that never started after all others (`ORDER BY startedAt DESC NULLS LAST`).
   */
  order?: 'newest' | 'oldest' | 'sessionId' | 'random' | 'startedNullsLast';
  /** Number of the first page (0: the overview's "current_page defaults to 0"). */
  pageBase?: 0 | 1;
  /** Largest page served, whatever perPage asks for. */
  cap?: number;
  /** With `cap`: offsets step by the perPage asked, not the size served (rows between pages never served; total_pages from perPage). */
  offsetByRequested?: boolean;
  /** With `cap`: the first this-many List Calls requests are served whole, the cap applies after them. */
  capAfterRequests?: number;
  perPage?: 'real' | 'requested' | 'absent' | number;
  /** 'jitter': the real count plus 0–5 on every answer; 'decreasing': one lower on every page, real on the last; 'page': each page's own count. */
  total?: 'real' | 'absent' | 'jitter' | 'decreasing' | 'page' | number;
  /** 'requested': computed from the requested perPage, not the served one. */
  totalPages?: 'real' | 'absent' | 'requested' | number;
  /** 'plusOne': a server counting pages from 0 that says current_page = page + 1. */
  currentPage?: 'real' | 'absent' | 'one' | 'plusOne';
  /**
   * Calls removed while the listing is read: before each List request for a page after the first,
   * one call already listed (five above the page) is deleted, this many times in all.
   */
  deleteWhileListing?: number;
  /**
   * Rolling retention while the listing is read: before each List request for a page after the
   * first, the oldest call is deleted and a new one added (now), this many times in all; `total`
   * stays level.
   */
  retainWhileListing?: number;
  /** One call already listed (five above the page) is removed just before the first request for this page (as numbered by the service). */
  deleteBeforePage?: number;
  /** Calls arriving while the listing is read: before each List request for a page after the first, a new call (now), this many times; `total` rises. */
  arriveWhileListing?: number;
  /** Calls expiring while the listing is read: before each List request for a page after the first, the oldest call is deleted, this many times; `total` falls. */
  expireWhileListing?: number;
  /**
   * Calls appearing in the middle of the listing while it is read (indexed late): before each List
   * request for a page after the first, a call initiated a second before the call ten places below
   * the page asked, this many times; `total` rises.
   */
  insertWhileListing?: number;
  /**
   * Calls at these listing positions (newest first) share one start time, and ties are ordered by
   * sessionId ascending on one List request and descending on the next (LIMIT/OFFSET over an
   * ORDER BY that does not decide ties).
   */
  tiedBlock?: { at: number; size: number; /** 'random': each request flips a coin instead (seeded), as a query plan might. */ ties?: 'alternate' | 'random' };
  /** Every page after the first is served this many rows short, offsets still stepping by the page size (rows hidden after paging). */
  hideRows?: number;
  /** The page at this 0-based position is served empty and the one before it short (5 entries kept back): rows hidden after paging. */
  gapAt?: number;
  /** The page at this 0-based position begins with the previous page's last call, and the call that belongs there is never shown (offsets one short). */
  overlapAt?: number;
  /** What a page past the end answers: nothing, the last page again, the first page again, or HTTP 404 `{"detail":"Invalid page."}` (Django REST framework). */
  pastEnd?: 'empty' | 'last' | 'first' | 'invalid';
  /** Every page answers the first page (the vendor README: a server that ignores `page`). */
  ignorePage?: boolean;
  /** `meta.pagination`, no `meta` at all, or a top-level `pagination` spelled in camelCase (totalPages, currentPage, perPage). */
  meta?: 'pagination' | 'none' | 'top-camel';
  /** How never-started calls (unanswered, rejected, canceled) carry startedAt on the wire. */
  unstarted?: 'absent' | 'zero' | 'negative' | 'null';
  /** How many calls are dated in the future (7, 14, … days ahead: clock skew, a test call). */
  futureCalls?: number;
  /** Calls that are ongoing now (the fake ends them on `endOngoing`). */
  ongoing?: number;
  /** Spread of the calls' initiatedAt into the past, in hours. */
  spanHours?: number;
  /** Distinct groups the group calls go to (default 3: g-alpha, g-beta, g-gamma; more are g-3, g-4, …). */
  groups?: number;
  /** List Group Members: largest page served, the per_page echoed and the total stated. */
  members?: {
    /**
     * `omit`: no total field (total_pages stays, from the real count). `page`: each page's own
     * figures (total its row count, total_pages 1), as a server counting what it serves would.
     */
    cap?: number; perPage?: 'real' | 'requested'; total?: 'real' | 'omit' | 'page' | number;
    /** Every page answers the first (a server paging by cursor only). */
    ignorePage?: boolean;
    /** Before page 2 is served, the group's first member leaves, this many times in all. */
    leaveBeforePage2?: number;
    /** Before page 2 is served, the first member leaves and a new one joins at the end (the count stays level), this many times in all. */
    churnBeforePage2?: number;
    /** Page 2 is served one member short, every time (offsets still step by the page size). */
    page2Short?: boolean;
    /** Every request answers a bare 404 (an HTML page, no service code). */
    bare404?: boolean;
    /** The number of the first page (default 1; a page below it answers the first page). */
    pageBase?: 0 | 1;
    /** `omit`: no current_page field. */
    currentPage?: 'omit';
    /** Page 0 (of pages counted from 1) is refused with a 400, or answered ERR_GUID_NOT_FOUND. */
    pageZero?: 'refuse' | 'notFound';
    /** Members' uids are numbers on the wire (`100001`), their joinedAt ISO 8601 text. */
    numericUids?: boolean;
    /** The first member of every group is served with a uid no client can read (an object). */
    unreadableFirst?: boolean;
    /** Page 2's last entry is the group's first member again (overlapping pages): the member that belongs there is never shown. */
    overlapPage2?: boolean;
    /** A perPage above this is refused with a 400 (a service whose cap is below the documented 1000). */
    maxPerPage?: number;
    /** With `cap`: offsets step by the perPage asked, not the size served (members between pages never served). */
    offsetByRequested?: boolean;
    /** Before page 2 is served the group's first member leaves, and it is back when page 1 is served again (a member leaving and rejoining in step with the reads). */
    flapBeforePage2?: boolean;
    /** The total stated on pages after the first is the real count plus 1, 2, 3, … in turn (a cached figure that drifts; the members never change). */
    jitterTotal?: boolean;
    /** A page past the group's last answers the last page (a server clamping `page` into range). */
    clampPastEnd?: boolean;
    /** Groups after the first (in the order they were made) are served pages of at most this many: a page size that varies by group (by bytes, by load). */
    laterGroupsCap?: number;
  };
  /** Page 0 (of pages counted from 1) answers no calls, its current_page echoing the request's 0. */
  pageZeroEmptyEcho?: boolean;
  /** Page 0 (of pages counted from 1) answers the listing's last rows, as `slice((page - 1) * perPage)` does with its negative start, saying current_page 1. */
  pageZeroLast?: boolean;
  /** List Calls entries spell their id `session_id` (no `sessionId`). */
  snakeSessionId?: boolean;
  /** The body Usage Metrics (`GET …/stats`) answers with. */
  usage?: Wire;
  /** Get Call answers without these top-level fields (a detail view that leaves out what the list shows). */
  getOmits?: string[];
  /** Every this-many-th ended call with two or more participants is listed twice on its page: first a stale copy (its first participant only, ended 20 s earlier), then as it is. */
  staleCopyFirst?: number;
  /** Every this-many-th call's List Calls entry writes `status` as a number (Get Call writes it as text): the entry does not parse. */
  unreadableInList?: number;
  /** The listing holds one malformed entry without a sessionId, right after the call that is the newest at start: new calls move it down. */
  malformedAfterNewest?: boolean;
  /** The first Get Call of the this-many newest calls answers ERR_CALL_SESSION_NOT_FOUND (a replica behind the listing). */
  notFoundFirst?: number;
  /** Get Call of every this-many-th call answers its first request with a bare 404 (an nginx HTML page, no service code), as a proxy during a deploy might. */
  bare404First?: number;
  /** Every `every`-th ended call has two recordings; `first`: its List Calls entry shows only the first (Get Call shows both). */
  recordings?: {
    every: number;
    /** What List Calls entries carry: every recording, only the first, or none (hasRecording still true). */
    listed: 'all' | 'first' | 'none';
    /** List Calls entries carry at most this many recordings (Get Call all of them). */
    listCap?: number;
    /** The first Get Call of each recorded call answers an older state: hasRecording false, no recordings (a lagging replica). */
    staleFirstGet?: boolean;
  };
  /** List Calls entries carry the call's id, kind, status and times only (no participants, no minutes): every call needs Get Call. */
  listMinimal?: boolean;
  /**
   * Every this-many-th ended call with two or more joined participants: until `settleMinutes()`, Get
   * Call answers its last joined participant with zero minutes (worked out later, as a service that
   * processes each participant's minutes after the call might); its list entry does not change.
   */
  lateMinutes?: number;
  /** As lateMinutes, but Get Call leaves the call's last participant out (totalParticipants still counts it). */
  lateParticipants?: number;
  /** Rewrites each List Calls entry (a copy of the call as the wire shows it): a list that carries less, or states it otherwise, than Get Call. */
  listEntry?: (entry: Wire, call: FakeCall) => Wire;
  /** Rewrites each Get Call answer (a copy of the call as the wire shows it): details the service has not worked out yet, say. */
  getAnswer?: (answer: Wire, call: FakeCall) => Wire;
  /** Called before each List Calls page is built (0-based page index, served size, request number): calls that change while listed. */
  beforeList?: (svc: FakeCallsService, index: number, size: number, request: number) => void;
  /** Rewrites each List Calls answer (rows as served, pagination) before it is sent: a cached total, a per-page total. */
  rewriteList?: (p: { data: Wire[]; pagination: Wire; index: number; size: number; request: number; all: Wire[] }) => { data: Wire[]; pagination: Wire };
  /** Sorts the listing itself (instead of `order`). */
  sortWith?: (list: FakeCall[], request: number) => FakeCall[];
  /** Path of the vendor's OpenAPI file: its List Calls example answers every page, Get Call its example adapted to each listed call. */
  vendor?: string;
}

export type Wire = Record<string, unknown>;
export interface FakeParticipant { uid: string; deviceId?: string; totalAudioMinutes: number; totalVideoMinutes: number; totalDuration: number; isJoined: boolean; joinedAt?: number; leftAt?: number; state: string }
/** A call as the fake holds it; `startedAt` is undefined for a call that never started. */
export interface FakeCall extends Wire { sessionId: string; status: string; initiatedAt: number; startedAt?: number; endedAt?: number; receiverType: string; receiver: string; participants: FakeParticipant[] }

const GUIDS = ['g-alpha', 'g-beta', 'g-gamma'];
/** What list() answers for a page past the last with `pastEnd: 'invalid'` (handle() makes it a 404). */
const INVALID_PAGE: Wire = {};
const guidOf = (k: number): string => GUIDS[k] ?? `g-${k}`;
/** A list entry without a sessionId (malformedAfter). */
const MALFORMED: Wire = { type: 'audio', status: 'ended', initiatedAt: 'yesterday' };
const NOW = (): number => Math.floor(Date.now() / 1000);

function hhmmss(sec: number): string {
  const s = Math.max(0, Math.round(sec));
  return [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60].map((n) => String(n).padStart(2, '0')).join(':');
}

export class FakeCallsService {
  readonly calls: FakeCall[] = [];
  /** Current members of each group, by guid. */
  readonly members = new Map<string, string[]>();
  listRequests = 0;
  /** Requests List Group Members answered (any page, any answer). */
  memberRequests = 0;
  /** List Group Members answers ERR_GUID_NOT_FOUND for the next this-many requests of a page after the first (the group still exists). */
  membersNotFoundLater = 0;
  /** The next this many requests for page 1 of a group's members answer ERR_GUID_NOT_FOUND (the group exists). */
  membersNotFoundOnPage1 = 0;
  /** The next this many requests for page 0 of a group's members answer ERR_GUID_NOT_FOUND (the group exists). */
  membersNotFoundOnPage0 = 0;
  /** Members away for the rest of a reading (members.flapBeforePage2), by guid. */
  readonly #flapped = new Map<string, string>();
  /** Calls whose Get Call is refused with a 403 ERR_CALL_ACCESS_RESTRICTED (the key is fine). */
  readonly getForbidden = new Set<string>();
  /** A member's scope other than 'participant', by uid (a member promoted between nights). */
  readonly memberScopes = new Map<string, string>();
  /** Groups whose members are refused with a 403 ERR_GROUP_NOT_JOINED (the key is fine). */
  readonly membersForbidden = new Set<string>();
  #jitter = 0;
  /** The session ids Get Call was asked for, in order. */
  readonly getIds: string[] = [];
  readonly #rand: () => number;
  #n = 0;
  #deletions: number;
  #retentions: number;
  readonly #bare404Served = new Set<string>();
  readonly #staleServed = new Set<string>();
  #minutesSettled = false;
  #malformedAnchor: FakeCall | undefined;
  #arrived = 0;
  #deletedBefore = false;
  #expired = 0;
  #inserted = 0;
  /** Members who left while their group was listed (members.leaveBeforePage2). */
  #left = 0;
  /** Members replaced while their group was listed (members.churnBeforePage2). */
  #churned = 0;
  /** Vendor mode: the published List Calls example (served as is) and Get Call's data. */
  #listExample: string | undefined;
  #getExample: Wire | undefined;

  private constructor(readonly opts: FakeOptions, private readonly server: TestServer) {
    this.#rand = seededRandom(opts.seed ?? 7);
    this.#deletions = opts.deleteWhileListing ?? 0;
    this.#retentions = opts.retainWhileListing ?? 0;
  }

  static async start(opts: FakeOptions = {}): Promise<FakeCallsService> {
    let self: FakeCallsService | undefined;
    const server = await startServer((req) => self!.handle(req.url));
    self = new FakeCallsService(opts, server);
    self.populate();
    return self;
  }

  get url(): string { return this.server.url; }
  get requests(): number { return this.server.requests.length; }
  baseUrls(appId = 'app1'): { callsBaseUrl: string; chatBaseUrl: string } {
    return { callsBaseUrl: `${this.url}/${appId}.call-us/v3`, chatBaseUrl: `${this.url}/${appId}.api-us/v3` };
  }
  close(): Promise<void> { return this.server.close(); }

  private populate(): void {
    const o = this.opts;
    if (o.vendor) {
      type Spec = { paths: Record<string, { get: { responses: Record<string, { content: Record<string, { example: { data: unknown } }> }> } }> };
      const example = (path: string): { data: unknown } => (JSON.parse(readFileSync(o.vendor!, 'utf8')) as Spec).paths[path]!.get.responses['200']!.content['application/json']!.example;
      this.#listExample = JSON.stringify(example('/calls'));
      this.calls.push(...(example('/calls').data as FakeCall[]));
      this.#getExample = example('/calls/{sessionId}').data as Wire;
    } else {
      const now = NOW();
      const span = (o.spanHours ?? 144) * 3600;
      for (let i = 0; i < (o.calls ?? 137); i++) this.addCall({ at: now - 600 - Math.floor(this.#rand() * span) });
      for (let i = 0; i < (o.ongoing ?? 2); i++) this.addCall({ at: now - 300 - i * 60, status: 'ongoing' });
      for (let i = 0; i < (o.futureCalls ?? 0); i++) this.addCall({ at: now + (i + 1) * 7 * 86400, status: 'ended' });
      if (o.tiedBlock) {
        const block = this.ordered().slice(o.tiedBlock.at, o.tiedBlock.at + o.tiedBlock.size);
        this.tie(block, block[0]!.initiatedAt);
      }
    }
    const rec = o.recordings;
    if (rec) {
      this.calls.filter((c) => c.status === 'ended' && c.startedAt !== undefined && c.endedAt !== undefined).forEach((c, i) => {
        if (i % rec.every !== 0) return;
        const mid = Math.floor((c.startedAt! + c.endedAt!) / 2);
        c.hasRecording = true;
        c.recordings = [[c.startedAt!, mid], [mid, c.endedAt!]].map(([a, b], k) => ({ rid: `${c.sessionId}-r${k}`, recording_url: `https://rec.invalid/${c.sessionId}/${k}.mp4`, startTime: a, endTime: b, duration: (b! - a!) / 60 }));
      });
    }
    for (const c of this.calls) {
      if (c.receiverType === 'group' && !this.members.has(c.receiver)) {
        const k = this.members.size;
        this.members.set(c.receiver, Array.from({ length: 37 + k * 11 }, (_, i) => (this.opts.members?.numericUids ? String(100_000 * (k + 1) + i) : `${c.receiver}-member-${i}`)));
      }
    }
  }

  /** Adds one small, complete call initiated at `at` (unix seconds); returns it. */
  /** Gives `calls` one time: initiated at `at`, started 3 s later, ended a minute after (ties by the listing's order key). */
  tie(calls: readonly FakeCall[], at: number): void {
    for (const c of calls) {
      Object.assign(c, { initiatedAt: at, status: 'ended', startedAt: at + 3 });
      this.settle(c, at + 63);
    }
  }

  addCall(p: { at: number; status?: string }): FakeCall {
    const r = this.#rand;
    const n = ++this.#n;
    const status = p.status ?? (r() < 0.72 ? 'ended' : ['unanswered', 'rejected', 'canceled'][Math.floor(r() * 3)]!);
    const video = r() < 0.4;
    const group = r() < 0.2;
    const initiator = `user-${Math.floor(r() * 20)}`;
    const sessionId = `v1.us.fakeapp.${Math.floor(r() * 0xffffffff).toString(16).padStart(8, '0')}${n.toString(16).padStart(6, '0')}`;
    const uids = [initiator, ...Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) => `user-${20 + ((n * 7 + i) % 30)}`)];
    const started = status === 'ended' || status === 'ongoing';
    const startedAt = started ? p.at + 3 + Math.floor(r() * 15) : undefined;
    const call: FakeCall = {
      sessionId, type: video ? 'video' : 'audio', mode: group ? 'meet' : 'call', receiverType: group ? 'group' : 'user',
      receiver: group ? guidOf(n % (this.opts.groups ?? GUIDS.length)) : uids[1]!, initiator, status, hasRecording: false, initiatedAt: p.at,
      participants: uids.map((uid) => ({ uid, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDuration: 0, isJoined: false, state: 'unanswered' })),
    };
    if (startedAt !== undefined) call.startedAt = startedAt;
    const start = startedAt ?? p.at;
    const end = start + 20 + Math.floor(r() * 300);
    this.settle(call, status === 'ongoing' ? undefined : start > NOW() ? end : Math.max(start + 1, Math.min(end, NOW() - 1)));
    this.calls.push(call);
    return call;
  }

  /** Sets status-dependent fields: participants' minutes and times, the call-level totals. */
  settle(c: FakeCall, endedAt: number | undefined): void {
    const now = NOW();
    if (endedAt !== undefined) c.endedAt = endedAt; else delete c.endedAt;
    if (c.startedAt !== undefined) {
      const end = endedAt ?? now;
      c.participants.forEach((p, i) => {
        const joinedAt = c.startedAt! + i;
        const leftAt = Math.max(joinedAt, end - ((i * 3) % 7));
        const minutes = (leftAt - joinedAt) / 60;
        Object.assign(p, { deviceId: `dev-${p.uid}-${c.sessionId.slice(-6)}`, isJoined: true, joinedAt, state: endedAt === undefined ? 'ongoing' : 'ended', totalAudioMinutes: c.type === 'audio' ? minutes : 0, totalVideoMinutes: c.type === 'video' ? minutes : 0, totalDuration: minutes });
        if (endedAt !== undefined) p.leftAt = leftAt; else delete p.leftAt;
      });
    }
    const sum = (k: 'totalAudioMinutes' | 'totalVideoMinutes'): number => c.participants.reduce((s, p) => s + p[k], 0);
    Object.assign(c, {
      totalAudioMinutes: sum('totalAudioMinutes'), totalVideoMinutes: sum('totalVideoMinutes'), totalDurationInMinutes: sum('totalAudioMinutes') + sum('totalVideoMinutes'),
      totalDuration: hhmmss(c.startedAt === undefined ? 0 : (endedAt ?? now) - c.startedAt), totalParticipants: c.participants.length,
    });
  }

  /** Ends every ongoing call now. */
  /** Get Call answers every participant's minutes from now on (see lateMinutes). */
  settleMinutes(): void {
    this.#minutesSettled = true;
  }

  /** Whether Get Call answers this call with a participant's minutes still at zero (lateMinutes). */
  minutesLate(c: FakeCall): boolean {
    return this.#late(c, this.opts.lateMinutes);
  }

  /** Whether Get Call answers this call without its last participant (lateParticipants). */
  participantLate(c: FakeCall): boolean {
    return this.#late(c, this.opts.lateParticipants);
  }

  #late(c: FakeCall, every: number | undefined): boolean {
    return every !== undefined && !this.#minutesSettled && c.status === 'ended' && c.participants.filter((p) => p.isJoined).length >= 2 && this.calls.indexOf(c) % every === 0;
  }

  endOngoing(): void {
    for (const c of this.calls) if (c.status === 'ongoing') { c.status = 'ended'; this.settle(c, NOW()); }
  }

  /** The call as the wire shows it (never-started calls carry startedAt the way the options say). */
  private wire(c: FakeCall, listed = false): Wire {
    const w: Wire = { ...c, participants: c.participants.map((p) => ({ ...p })) };
    if (listed && this.opts.recordings?.listed === 'first' && Array.isArray(c.recordings)) w.recordings = c.recordings.slice(0, 1);
    if (listed && this.opts.recordings?.listed === 'none') delete w.recordings;
    const cap = this.opts.recordings?.listCap;
    if (listed && cap !== undefined && Array.isArray(w.recordings)) w.recordings = w.recordings.slice(0, cap);
    if (listed && this.opts.listMinimal) {
      const { sessionId, type, mode, status, receiverType, receiver, initiatedAt, startedAt, endedAt } = c;
      return { sessionId, type, mode, status, receiverType, receiver, initiatedAt, startedAt, endedAt };
    }
    if (c.startedAt === undefined && !this.opts.vendor) {
      const u = this.opts.unstarted ?? 'absent';
      if (u !== 'absent') w.startedAt = u === 'zero' ? 0 : u === 'negative' ? -1 : null;
    }
    return listed && this.opts.listEntry ? this.opts.listEntry(w, c) : w;
  }

  private ordered(): FakeCall[] {
    const order = this.opts.order ?? 'newest';
    const list = [...this.calls];
    if (this.opts.sortWith) return this.opts.sortWith(list, this.listRequests);
    if (order === 'random') {
      for (let i = list.length - 1; i > 0; i--) { const j = Math.floor(this.#rand() * (i + 1)); [list[i], list[j]] = [list[j]!, list[i]!]; }
      return list;
    }
    if (order === 'sessionId') return list.sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
    if (order === 'startedNullsLast') return list.sort((a, b) => (b.startedAt ?? -Infinity) - (a.startedAt ?? -Infinity) || (a.sessionId < b.sessionId ? -1 : 1));
    const sign = order === 'oldest' ? 1 : -1;
    const tied = this.opts.tiedBlock;
    const ties = tied && (tied.ties === 'random' ? this.#rand() < 0.5 : this.listRequests % 2 === 0) ? -1 : 1;
    return list.sort((a, b) => sign * (a.initiatedAt - b.initiatedAt) || ties * (a.sessionId < b.sessionId ? -1 : 1));
  }

  private handle(url: string): Reply {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const params = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const json = (status: number, body: unknown): Reply => ({ status, body: JSON.stringify(body) });
    if (/\/v3\/calls$/.test(path)) {
      if (this.#listExample === undefined) {
        const body = this.list(params);
        return body === INVALID_PAGE ? json(404, { detail: 'Invalid page.' }) : json(200, body);
      }
      this.listRequests++;
      return { status: 200, body: this.#listExample }; // the published example, whatever page is asked
    }
    const get = /\/v3\/calls\/([^/]+)$/.exec(path);
    if (get) {
      const id = decodeURIComponent(get[1]!);
      this.getIds.push(id);
      if (this.getForbidden.has(id)) return json(403, { error: { code: 'ERR_CALL_ACCESS_RESTRICTED', message: 'This call cannot be read with this key' } });
      const c = this.calls.find((x) => x.sessionId === id);
      if (!c) return json(404, { error: { code: 'ERR_CALL_SESSION_NOT_FOUND', message: `The call session ${id} does not exist.` } });
      const newest = this.opts.notFoundFirst;
      if (newest && !this.#staleServed.has(`nf:${id}`) && this.ordered().slice(0, newest).includes(c)) {
        this.#staleServed.add(`nf:${id}`);
        return json(404, { error: { code: 'ERR_CALL_SESSION_NOT_FOUND', message: `The call session ${id} does not exist.` } });
      }
      const every = this.opts.bare404First;
      if (every && this.calls.indexOf(c) % every === 0 && !this.#bare404Served.has(id)) {
        this.#bare404Served.add(id);
        return { status: 404, body: '<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>' };
      }
      if (this.opts.recordings?.staleFirstGet && Array.isArray(c.recordings) && !this.#staleServed.has(id)) {
        this.#staleServed.add(id);
        const older = this.wire(c);
        delete older.recordings;
        return json(200, { data: { ...older, hasRecording: false } });
      }
      const answer = this.#getExample ? { ...this.#getExample, ...this.wire(c) } : this.wire(c);
      for (const k of this.opts.getOmits ?? []) delete answer[k];
      if (this.minutesLate(c)) {
        const ps = answer.participants as FakeParticipant[];
        const last = ps.findLastIndex((p) => p.isJoined);
        ps[last] = { ...ps[last]!, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDuration: 0 };
      }
      if (this.participantLate(c)) answer.participants = (answer.participants as FakeParticipant[]).slice(0, -1);
      return json(200, { data: this.opts.getAnswer ? this.opts.getAnswer(answer, c) : answer });
    }
    if (path.endsWith('/v3/stats') && this.opts.usage) return json(200, this.opts.usage);
    const members = /\/v3\/groups\/([^/]+)\/members$/.exec(path);
    if (members) {
      const guid = decodeURIComponent(members[1]!);
      const all = this.members.get(guid);
      this.memberRequests++;
      if (!all) return json(404, { error: { code: 'ERR_GUID_NOT_FOUND', message: `The group with GUID ${guid} does not exist.` } });
      const m = this.opts.members ?? {};
      const requested = Number(params.get('perPage') ?? 100);
      const later = m.laterGroupsCap !== undefined && [...this.members.keys()].indexOf(guid) > 0;
      const size = Math.min(requested, m.cap ?? 1000, later ? m.laterGroupsCap! : Number.POSITIVE_INFINITY);
      if (m.bare404) return { status: 404, body: '<html><body><h1>404 Not Found</h1></body></html>' };
      if (this.membersForbidden.has(guid)) return json(403, { error: { code: 'ERR_GROUP_NOT_JOINED', message: 'The user is not a member of the group' } });
      if (params.get('page') === '0' && this.membersNotFoundOnPage0 > 0) {
        this.membersNotFoundOnPage0--;
        return json(404, { error: { code: 'ERR_GUID_NOT_FOUND', message: `The group with GUID ${guid} does not exist.` } });
      }
      if (params.get('page') === '1' && this.membersNotFoundOnPage1 > 0) {
        this.membersNotFoundOnPage1--;
        return json(404, { error: { code: 'ERR_GUID_NOT_FOUND', message: `The group with GUID ${guid} does not exist.` } });
      }
      if (m.maxPerPage !== undefined && requested > m.maxPerPage) {
        return json(400, { error: { code: 'ERR_BAD_REQUEST', message: `perPage must be at most ${m.maxPerPage}` } });
      }
      if (m.pageZero !== undefined && (m.pageBase ?? 1) === 1 && params.get('page') === '0') {
        return m.pageZero === 'refuse'
          ? json(400, { error: { code: 'ERR_BAD_REQUEST', message: 'page must be 1 or more' } })
          : json(404, { error: { code: 'ERR_GUID_NOT_FOUND', message: `The group with GUID ${guid} does not exist.` } });
      }
      const base = m.pageBase ?? 1;
      const asked = Math.max(base, Number(params.get('page') ?? base));
      // `page` below: the 1-based position of the page served.
      const lastPage = Math.max(1, Math.ceil(all.length / size));
      const page = m.ignorePage ? 1 : m.clampPastEnd ? Math.min(asked - base + 1, lastPage) : asked - base + 1;
      if (m.flapBeforePage2 && page === 1 && this.#flapped.has(guid)) {
        all.unshift(this.#flapped.get(guid)!);
        this.#flapped.delete(guid);
      }
      if (m.flapBeforePage2 && page === 2 && !this.#flapped.has(guid)) this.#flapped.set(guid, all.shift()!);
      if (page === 2 && (m.leaveBeforePage2 ?? 0) > this.#left) {
        this.#left++;
        all.shift();
      }
      if (page === 2 && (m.churnBeforePage2 ?? 0) > this.#churned) {
        this.#churned++;
        all.shift();
        all.push(`${guid}-joined-${this.#churned}`);
      }
      if (page > 1 && this.membersNotFoundLater > 0) {
        this.membersNotFoundLater--;
        return json(404, { error: { code: 'ERR_GUID_NOT_FOUND', message: `The group with GUID ${guid} does not exist.` } });
      }
      const step = m.offsetByRequested ? requested : size;
      const served = all.slice((page - 1) * step, (page - 1) * step + size);
      if (m.page2Short && page === 2) served.pop();
      if (m.overlapPage2 && page === 2 && served.length > 0) served[served.length - 1] = all[0]!;
      const data = served.map((uid) => {
        if (m.unreadableFirst && uid === all[0]) return { uid: { id: uid }, name: uid, scope: 'participant', joinedAt: 1700000000 };
        if (m.numericUids) return { uid: Number(uid), name: uid, scope: 'participant', joinedAt: new Date(1700000000 * 1000).toISOString() };
        return { uid, name: uid, scope: this.memberScopes.get(uid) ?? 'participant', joinedAt: 1700000000 };
      });
      const total = (m.total === 'page' ? data.length : m.total === undefined || m.total === 'real' || m.total === 'omit' ? all.length : m.total) + (m.jitterTotal && page > 1 ? ++this.#jitter : 0);
      const pagination = { total, count: data.length, per_page: m.perPage === 'requested' ? requested : size, current_page: page + base - 1, total_pages: m.total === 'page' ? 1 : Math.max(1, Math.ceil(total / step)) };
      if (m.total === 'omit') delete (pagination as Partial<typeof pagination>).total;
      if (m.currentPage === 'omit') delete (pagination as Partial<typeof pagination>).current_page;
      return json(200, { data, meta: { pagination } });
    }
    return json(404, { error: { code: 'ERR_NOT_FOUND', message: `no route ${path}` } });
  }

  /** arriveWhileListing, expireWhileListing, insertWhileListing: before page `index` (0-based) is served. */
  private churn(index: number, size: number): void {
    const o = this.opts;
    if ((o.arriveWhileListing ?? 0) > this.#arrived) {
      this.#arrived++;
      this.addCall({ at: NOW() - 30, status: 'ended' });
    }
    if ((o.expireWhileListing ?? 0) > this.#expired) {
      this.#expired++;
      const oldest = this.calls.reduce((a, b) => (b.initiatedAt < a.initiatedAt ? b : a));
      this.calls.splice(this.calls.indexOf(oldest), 1);
    }
    // ordered() draws the tie coin of `tiedBlock: random`: asked only when inserting.
    const below = (o.insertWhileListing ?? 0) > this.#inserted ? this.ordered()[(index + 1) * size + 10] : undefined;
    if (below) {
      this.#inserted++;
      this.addCall({ at: below.initiatedAt - 1, status: 'ended' });
    }
  }

  private list(params: URLSearchParams): Wire {
    this.listRequests++;
    const o = this.opts;
    const base = o.pageBase ?? 1;
    const requested = Number(params.get('perPage') ?? 100) || 100;
    const cap = o.capAfterRequests !== undefined && this.listRequests <= o.capAfterRequests ? undefined : o.cap;
    const size = Math.max(1, Math.min(requested, cap ?? 1000));
    const asked = params.has('page') ? Number(params.get('page')) : base;
    if (o.pageZeroEmptyEcho && base === 1 && asked === 0) {
      const pagination: Wire = { count: 0, current_page: 0, per_page: size };
      if ((o.total ?? 'real') === 'real') pagination.total = this.ordered().length;
      return { data: [], meta: { pagination } };
    }
    if (this.#deletions > 0 && Number.isInteger(asked) && asked - base >= 1) {
      // Removed before this page is served: a call the pages already read showed.
      const listed = this.ordered();
      const victim = listed[Math.max(0, (asked - base) * size - 5)];
      if (victim) {
        this.#deletions--;
        this.calls.splice(this.calls.indexOf(victim), 1);
      }
    }
    if (this.#retentions > 0 && Number.isInteger(asked) && asked - base >= 1) {
      this.#retentions--;
      const oldest = this.calls.reduce((a, b) => (b.initiatedAt < a.initiatedAt ? b : a));
      this.calls.splice(this.calls.indexOf(oldest), 1);
      this.addCall({ at: NOW() - 30, status: 'ended' });
    }
    if (Number.isInteger(asked) && asked - base >= 1) this.churn(asked - base, size);
    if (o.beforeList && Number.isInteger(asked)) o.beforeList(this, asked - base, size, this.listRequests);
    if (o.deleteBeforePage === asked && !this.#deletedBefore) {
      this.#deletedBefore = true;
      const victim = this.ordered()[(asked - base) * size - 5];
      if (victim) this.calls.splice(this.calls.indexOf(victim), 1);
    }
    const all: Wire[] = this.ordered();
    if (o.malformedAfterNewest) {
      this.#malformedAnchor ??= all[0] as FakeCall;
      all.splice(all.indexOf(this.#malformedAnchor) + 1, 0, MALFORMED);
    }
    const n = all.length;
    const step = o.offsetByRequested ? requested : size;
    const last = Math.max(0, Math.ceil(n / step) - 1);
    let idx = o.ignorePage || !Number.isInteger(asked) || asked < base ? 0 : asked - base;
    if (idx > last && o.pastEnd === 'invalid' && n > 0) return INVALID_PAGE;
    if (idx > last) idx = o.pastEnd === 'last' ? last : o.pastEnd === 'first' ? 0 : idx;
    let rows = o.pageZeroLast && base === 1 && asked === 0 ? all.slice(-size) : all.slice(idx * step, idx * step + size);
    if (o.hideRows && idx > 0) rows = rows.slice(0, Math.max(0, rows.length - o.hideRows));
    if (o.gapAt !== undefined && idx === o.gapAt) rows = [];
    if (o.gapAt !== undefined && idx === o.gapAt - 1) rows = rows.slice(0, -5);
    if (o.overlapAt !== undefined && idx === o.overlapAt && idx > 0 && rows.length > 0) rows = [all[idx * size - 1]!, ...rows.slice(1)];
    const stale = o.staleCopyFirst;
    if (stale) {
      rows = rows.flatMap((c) => {
        const f = c as FakeCall;
        if (c === MALFORMED || this.calls.indexOf(f) % stale !== 0 || f.status !== 'ended' || f.participants.length < 2) return [c];
        const copy = { ...f, participants: f.participants.slice(0, 1), totalParticipants: 1, endedAt: f.endedAt! - 20 };
        return [copy, c];
      });
    }
    const every = o.unreadableInList;
    const snake = (w: Wire): Wire => {
      if (!o.snakeSessionId) return w;
      const { sessionId, ...rest } = w;
      return { session_id: sessionId, ...rest };
    };
    const data = rows.map((c) => (c === MALFORMED ? c : every && this.calls.indexOf(c as FakeCall) % every === 0 ? { ...this.wire(c as FakeCall, true), status: 3 } : snake(this.wire(c as FakeCall, true))));
    if (o.meta === 'none') return { data };
    const pagination: Wire = { count: data.length };
    const t = o.total ?? 'real';
    if (t !== 'absent') pagination.total = t === 'real' ? n : t === 'jitter' ? n + Math.floor(this.#rand() * 6) : t === 'decreasing' ? n + Math.max(0, last - idx) : t === 'page' ? data.length : t;
    const pp = o.perPage ?? 'real';
    if (pp !== 'absent') pagination.per_page = pp === 'real' ? size : pp === 'requested' ? requested : pp;
    const cp = o.currentPage ?? 'real';
    if (cp !== 'absent') pagination.current_page = cp === 'one' ? 1 : cp === 'plusOne' ? idx + base + 1 : idx + base;
    const tp = o.totalPages ?? 'real';
    if (tp !== 'absent') pagination.total_pages = tp === 'real' ? Math.ceil(n / step) : tp === 'requested' ? Math.ceil(n / requested) : tp;
    if (o.rewriteList) {
      const r = o.rewriteList({ data, pagination, index: idx, size, request: this.listRequests, all });
      return { data: r.data, meta: { pagination: r.pagination } };
    }
    if (o.meta === 'top-camel') {
      const camel = (k: string): string => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      return { data, pagination: Object.fromEntries(Object.entries(pagination).map(([k, v]) => [camel(k), v])) };
    }
    return { data, meta: { pagination } };
  }
}
