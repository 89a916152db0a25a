import type pLimit from 'p-limit';
import type { CallsApi, GetListedCallResult } from '../source/calls-api.js';
import { ApiError, refusesKey } from '../source/errors.js';
import type { ApiCall } from '../source/schemas.js';
import type { RetryReason } from '../store/retries-repo.js';
import type { CallRows, NewRejectedRow } from '../store/schema.js';
import { apiCallToRows, callTime, listEntryIsComplete, parseCall, rowsToCompare, sessionStatedTwice } from '../transform/call-rows.js';
import { rejectedRow } from '../transform/rejected-row.js';
import { isGroupReceiver } from '../transform/call-status.js';
import { rowsDiffer } from '../transform/compare-rows.js';
import type { Logger } from '../log/logger.js';
import type { DetailCounters } from './detail-counters.js';
import { olderThanListed, partsUnstated } from './answer-check.js';
import type { MediaStatements } from './media-statements.js';
import { awaitsFiles, filledKeys, fillFromStored, lacksParts, looksUnsettled, withEarlierFields, withUnreadableEntry, type StoredAnswer } from './answer-fill.js';
import type { ListAudit } from './list-audit.js';
import type { SettleAudit } from './settle-audit.js';
import type { PageWrite } from './page-writer.js';
import type { Pending } from './page-planner.js';

export interface DetailFetcherDeps {
  api: Pick<CallsApi, 'getCall'>;
  limit: ReturnType<typeof pLimit>;
  appId: string;
  region: string;
  runId: string;
  nowSeconds: () => number;
  log: Logger;
  counters: DetailCounters;
  signal?: AbortSignal | undefined;
  /** Calls the follow-up passes may ask for (live before this run, on the retry list): see `fetched`. */
  watch: ReadonlySet<string>;
  /** Hears Get Call's answer for each audited list entry. */
  audit?: ListAudit | undefined;
  /** Hears Get Call's answer for each call fetched again to audit what an earlier run stored. */
  settle?: SettleAudit | undefined;
  /** The answer a stored call was last written from (its payload), read: see #one. */
  storedAnswer?: ((sessionId: string) => Promise<StoredAnswer | undefined>) | undefined;
  /** How this run's service states media (list entries and answers): what silence means when filling from the stored answer. */
  media?: MediaStatements | undefined;
  /**
   * Unix seconds: a listed call Get Call says does not exist, its entry not the whole call, makes
   * the run partial (see notFoundListed) when it started this recently.
   */
  recheckNotFoundSince?: number | undefined;
}

/**
 * Why an answer is unusable when what it leaves out is stored only provisionally (fillFromStored). The stored rows
 * stay (the list entry replacing them lost the earlier answer, and with it what the next answer
 * leaving the same out would be checked against).
 */
const PROVISIONAL = 'Get Call left out what only an earlier, provisional statement of the call has (stored while live, from its list entry after Get Call failed, unfinished, or under other call minutes)';

/** Get Call answers not-found this many runs in a row before a live call is taken as gone. */
export const LIVE_NOT_FOUND_RUNS = 3;

/**
 * Fetches the details of pending calls (Get Call, concurrently under the app's limit) and turns
 * every answer into writes. Whatever Get Call answers, a listed call is never dropped:
 * - the call: its rows (and it leaves the retry list);
 * - not found: the listed data with not_found_at; a live call only after LIVE_NOT_FOUND_RUNS runs
 *   in a row (a live call can be briefly unknown), until then it stays on the retry list;
 * - anything unusable (empty, null, another call, HTML, an error that retries did not cure, a
 *   redirect): the listed data with `detail_error`, and the call goes on the retry list, fetched
 *   again by later runs whatever its age.
 * An auth or account error is remembered as `fatal` (the app stops).
 */
export class DetailFetcher {
  #fatal: ApiError | undefined;
  /**
   * Calls Get Call was asked for in this run that a follow-up pass would otherwise ask again: those
   * in `watch`, those that did not come out whole, and those that still look unsettled. Only these
   * are kept, so memory stays small when every listed call is fetched (detailFetch always).
   */
  readonly fetched = new Set<string>();
  /**
   * Groups of the group calls Get Call supplied: a list entry that does not say who a call went to
   * (a hostile fake) named no group, and the group's members were never synced, ok.
   */
  readonly groups = new Set<string>();
  /**
   * Audited calls counted as lacking details in this run (and whether as kept): asked again by the
   * retry pass, their count is withdrawn first, so the answer there decides (see ListAudit.unanswered).
   */
  readonly #auditFailed = new Map<string, boolean>();

  constructor(private readonly d: DetailFetcherDeps) {}

  get fatal(): ApiError | undefined {
    return this.#fatal;
  }

  /** Builds a rejected record for `raw` (the caller adds it to a page's writes). */
  rejected(endpoint: string, key: string, reason: string, raw: unknown): NewRejectedRow {
    this.d.log.warn({ endpoint, recordKey: key, reason }, 'record rejected');
    return rejectedRow({ appId: this.d.appId, region: this.d.region, runId: this.d.runId, now: this.d.nowSeconds() }, endpoint, key, reason, raw);
  }

  /**
   * Fetches `pending` and returns one page's writes together with `listRows` and `rejects`.
   * `onLive` hears of listed calls Get Call shows still live.
   */
  async complete(listRows: CallRows[], pending: readonly Pending[], rejects: NewRejectedRow[], onLive: (id: string) => void): Promise<PageWrite> {
    const { d } = this;
    const w: PageWrite = { rows: listRows, rejects, notFoundIds: [], retries: [], cleared: [] };
    d.counters.detailFetches += pending.length;
    await Promise.all(pending.map((p) => d.limit(() => (p.audit ? this.#audited(p, w, onLive) : this.#one(p, w, onLive)))));
    return w;
  }

  /** An audited entry: when its answer was not compared with it (see #one), the audit is not done. */
  async #audited(p: Pending, w: PageWrite, onLive: (id: string) => void): Promise<void> {
    await this.#one(p, w, onLive);
    this.d.audit?.unanswered(p.call);
  }

  /** An audit asked again: what its first answer counted is withdrawn, this answer counts instead. */
  #withdraw(id: string): void {
    const kept = this.#auditFailed.get(id);
    if (kept === undefined) return;
    this.#auditFailed.delete(id);
    this.d.counters.failedCalls--;
    if (kept) this.d.counters.failedKept--;
  }

  async #one(p: Pending, w: PageWrite, onLive: (id: string) => void): Promise<void> {
    const { d } = this;
    if (this.#fatal || d.signal?.aborted) return;
    const id = p.call.sessionId;
    if (d.watch.has(id)) this.fetched.add(id);
    if (p.owedAudit) this.#withdraw(id);
    // An audit without a comparable answer stays owed: the retry pass asks for it again, in this
    // run and later ones, and compares that answer with the entry (see follow-ups).
    let owed = p.audit === true || p.owedAudit === true;
    const retry = (reason: RetryReason): void => void w.retries.push({ sessionId: id, reason: owed ? 'unanswered_audit' : reason });
    const failed = (kept: boolean): void => {
      d.counters.failedCalls++;
      if (kept) d.counters.failedKept++;
      if (owed) this.#auditFailed.set(id, kept);
    };
    /**
     * `keep`: the stored rows stay as they are, not replaced by the list entry (see #fromStored).
     * `disputed`: counted apart (see the relisted check below), and written without the entry's
     * fingerprint, so the next listing that shows the call asks for it with that entry alone.
     */
    const unusable = (reason: string, kind: 'unusable_detail' | 'get_failed', keep = false, disputed = false): void => {
      // A drawn audit (see followUpFetches) only looks: what is stored stays, and no answer is owed.
      // Owed, an old call whose recordings retention had removed (an answer "older than its entry")
      // or that Get Call refuses made every later run partial (helper-63).
      if (p.drawn) return;
      this.fetched.add(id);
      // A call whose list entry did not parse stays rejected, as it was before it was asked for.
      if (p.unreadableEntry) {
        d.counters.unreadCalls++;
        d.counters.firstUnread ??= `${id.slice(0, 80)}: ${reason.slice(0, 200)}`;
        // On the retry list: asked for again on later runs until Get Call answers readably. Left to
        // the listing, a call older than an incremental run's window was never asked again, the next
        // run ok with it missing (probe round 17 c).
        w.retries.push({ sessionId: id, reason: 'unreadable_entry' });
        d.log.warn({ sessionId: id, reason }, 'a list entry that does not parse: Get Call gave no usable details either; it stays in rejected_records');
        return;
      }
      const listed = p.json !== undefined && !keep;
      if (disputed) {
        d.counters.disputedCalls++;
        d.counters.firstDisputed ??= `${id.slice(0, 80)}: ${reason.slice(0, 200)}`;
      } else failed(!listed);
      retry(kind);
      if (p.json !== undefined && !keep) {
        w.rows.push(apiCallToRows(p.call, undefined, { appId: d.appId, region: d.region, now: d.nowSeconds(), source: 'list', listFingerprint: disputed ? null : p.listFingerprint, rawJson: p.json, detailError: reason.slice(0, 500) }));
        d.log.warn({ sessionId: id, reason }, 'Get Call gave no usable details; the call is kept as listed and fetched again on later runs');
        return;
      }
      d.log.warn({ sessionId: id, reason }, 'Get Call gave no usable details for a call asked for again; what is stored of it is kept, and it is fetched again on later runs');
    };
    let got: GetListedCallResult;
    try {
      got = await d.api.getCall(id, p.json);
    } catch (err) {
      // A 403 with a code of its own (ERR_CALL_ACCESS_RESTRICTED, say) refuses this call, not the key:
      // it failed the whole app, the line blaming the key (probe round 17 a). It is a call without
      // details, asked again on later runs; what refuses the key still stops the app.
      if (err instanceof ApiError && (err.kind === 'account' || (err.kind === 'auth' && refusesKey(err.kind, err.status, err.serviceCode)))) {
        this.#fatal ??= err;
        return;
      }
      if (err instanceof ApiError && err.kind === 'aborted') return; // not written: the next run fetches it
      // An audited entry whose call Get Call refuses (a code of its own): no answer will ever be
      // compared with it. It is stored from its entry as any entry not drawn, and the audit goes to a
      // later one (#audited); owed, it made every later run partial (helper-63 F7).
      if (p.audit && p.json !== undefined && err instanceof ApiError && err.kind === 'auth') {
        w.rows.push(apiCallToRows(p.call, undefined, { appId: d.appId, region: d.region, now: d.nowSeconds(), source: 'list', listFingerprint: p.listFingerprint, rawJson: p.json }));
        return;
      }
      unusable((err as Error).message, 'get_failed');
      return;
    }
    const now = d.nowSeconds();
    if (!got.found) {
      if (p.drawn) return; // a drawn audit only looks (see unusable): Get Call forgetting old calls marks none
      if (p.unreadableEntry) {
        d.counters.unreadCalls++;
        d.counters.firstUnread ??= `${id.slice(0, 80)}: Get Call answered not found${got.confirmed ? '' : ' without the service\'s own code'}`;
        // Only the service's own code says it is gone; anything else is asked again (as above).
        if (!got.confirmed) w.retries.push({ sessionId: id, reason: 'unreadable_entry' });
        return;
      }
      const strike = (p.retryAttempts ?? 0) + 1;
      this.fetched.add(id);
      if ((p.live || !got.confirmed) && strike < LIVE_NOT_FOUND_RUNS) {
        // A live call briefly unknown to Get Call, or a bare 404 without the service's code (a
        // proxy's page during a deploy: believed at once, it marked calls that exist as gone for
        // good, found by a hostile fake): asked again on the next runs before it is taken as gone;
        // meanwhile it lacks details like any call Get Call could not supply.
        failed(p.json === undefined);
        retry(p.live ? 'live_not_found' : 'unconfirmed_not_found');
        const why = p.live ? 'Get Call did not know this live call' : 'Get Call answered 404 without ERR_CALL_SESSION_NOT_FOUND';
        if (p.json !== undefined) {
          w.rows.push(apiCallToRows(p.call, undefined, { appId: d.appId, region: d.region, now, source: 'list', listFingerprint: p.listFingerprint, rawJson: p.json, detailError: `${why} (run ${strike} of ${LIVE_NOT_FOUND_RUNS} before it is taken as gone)` }));
        }
        return;
      }
      // The listing shows the call, its entry the whole call (listEntryIsComplete), and Get Call
      // denies it for the first time: a replica behind the listing, or a removal just after the
      // page was read. Marked, a call the service holds read as gone for a night (reports filter on
      // not_found_at), ok (probe77 fuzz). Stored from its entry, unmarked, as an entry not asked
      // for; on the retry list, so the next run asks again and a second denial marks it.
      if (p.json !== undefined && !p.relisted && !p.notFoundBefore && listEntryIsComplete(p.call)) {
        w.rows.push(apiCallToRows(p.call, undefined, { appId: d.appId, region: d.region, now, source: 'list', listFingerprint: p.listFingerprint, rawJson: p.json }));
        w.retries.push({ sessionId: id, reason: 'unconfirmed_not_found' });
        d.log.warn({ sessionId: id }, 'Get Call says a listed call does not exist; its entry is the whole call: stored as listed, asked again on the next run');
        return;
      }
      d.counters.notFound++;
      // The listing shows a recent call, Get Call says it does not exist (a Get behind the listing
      // answers so for the newest calls): stored, an entry that is not the whole call (no
      // participants, no minutes) kept the call without them, and the run said ok (probe69). Said
      // as a call lacking details; asked again while listed (recheckNotFoundSince).
      if (p.json !== undefined && d.recheckNotFoundSince !== undefined && (callTime(p.call) ?? 0) >= d.recheckNotFoundSince && !listEntryIsComplete(p.call)) {
        d.counters.notFoundListed++;
        d.counters.firstNotFoundListed ??= id.slice(0, 80);
      }
      w.cleared.push(id);
      // Denied again with the entry stored: nothing to write, and the first mark's time stays (every
      // listing asks such a call again, and each rewrote it: an incremental run wrote 8 calls for 5 new).
      if (p.notFoundBefore && p.sameEntry) return;
      // Keep what the listing said, flagged: the service no longer has this session.
      if (p.json !== undefined) w.rows.push(apiCallToRows(p.call, undefined, { appId: d.appId, region: d.region, now, source: 'list', listFingerprint: p.listFingerprint, notFoundAt: now, rawJson: p.json }));
      else w.notFoundIds.push(id);
      return;
    }
    if ('unusable' in got) {
      unusable(got.unusable, 'unusable_detail');
      return;
    }
    if ('asListed' in got) {
      // Get Call answered the list entry's own text: the call as listed, with its details source
      // the detail fetch (the service stated them twice).
      d.media?.see(p.call, 'get');
      const stored = this.#mayFill(p, p.call) ? await this.#fromStored(p.call) : undefined;
      if (stored?.provisional) {
        unusable(PROVISIONAL, 'unusable_detail', true);
        return;
      }
      const unstated = partsUnstated(stored?.call ?? p.call);
      if (unstated) return unusable(unstated, 'unusable_detail');
      if (stored) this.#store(stored.call, JSON.stringify(stored.call) ?? got.asListed, p, now, w, onLive);
      else this.#store(p.call, got.asListed, p, now, w, onLive);
      // An audit answered with the entry itself: nothing to compare, but done.
      if (p.audit) d.audit?.agreed(p.call);
      return;
    }
    // A Get body equal to the list entry (spelt differently: spacing, escapes) parses to the same
    // call: it is not validated twice.
    // What it leaves out, from an entry that did not parse: a field NULL, ok, though the entry stated it (seed 7008).
    const raw = p.entryRaw !== undefined ? withUnreadableEntry(p.entryRaw, got.raw) : got.raw;
    const json = JSON.stringify(raw) ?? 'undefined';
    const parsed = json === p.json ? ({ ok: true, call: p.call } as const) : parseCall(raw, id);
    if (!parsed.ok) {
      w.rejects.push(this.rejected('get_call', parsed.key, parsed.reason, raw));
      unusable(`Get Call answered a record that does not parse${raw !== got.raw ? ' with what it leaves out taken from the list entry' : ''}: ${parsed.reason}`, 'unusable_detail');
      return;
    }
    const own = raw === got.raw ? parsed : parseCall(got.raw, id);
    if (own.ok) d.media?.see(own.call, 'get');
    // What the answer leaves out comes from the list entry, then (below) from the answer the call was
    // last written from; its payload is then the merged record
    // (stored as answered, a later answer leaving the same out had nothing to take it from: NULL
    // call minutes, ok, probe round 13 F1).
    const listed = p.json !== undefined ? withEarlierFields(p.call, parsed.call) : parsed.call;
    // Listed twice with different entries: what the answer leaves out is stated by two entries that
    // may disagree, and taken from either it was stored, ok, from whichever write landed last (a
    // stale copy's participant minutes, a hostile fake at concurrency 4). No entry is taken then.
    if (p.relisted && listed !== parsed.call) {
      unusable(`listed twice in this run with different entries, and Get Call left out ${filledKeys(parsed.call, listed).join(', ')}: which entry states the call as it is now is not known`, 'unusable_detail', false, true);
      return;
    }
    // The answer against its list entry: older than it is unusable; more media than an audited
    // entry carried tells the audit (an answer that is the entry's own text needs neither). Judged
    // with what it left out filled: a view without `participants` stated none, partial every run
    // (round 13 F3); one stating fewer, or `hasRecording: false`, still is older.
    const older = p.json !== undefined ? olderThanListed(p.call, listed) : undefined;
    if (older) {
      unusable(`Get Call answered an older state of the call than its list entry (${older})`, 'unusable_detail');
      return;
    }
    // One session stated twice, differently: neither is known to hold, and both stored count it twice.
    const twice = sessionStatedTwice(listed.participants ?? []);
    if (twice) {
      unusable(`Get Call's answer contradicts itself: ${twice}`, 'unusable_detail');
      return;
    }
    // A call asked again to compare (SettleAudit) has its previous answer at hand; one asked by id
    // otherwise (live, retried, unsettled, stored from its entry) has what is stored of it read,
    // whole answer or not (see `entry` below); a listed one only when its answer lacks parts.
    const previous = p.settle?.previous;
    const before = p.json === undefined && !p.settle ? await d.storedAnswer?.(id) : undefined;
    let stored: { call: ApiCall; provisional: boolean } | undefined;
    if (previous) stored = fillFromStored(listed, { call: previous, lackedDetails: false }, d.media);
    // Whatever the answer leaves out (its kind, parties, status: not only PARTS), as the list entry
    // fills a listed call's: asked by id, an answer without `type` stored NULL there, and compared
    // with the entry it was stored from, made a false finding that fetched every call (session 29).
    else if (before) stored = fillFromStored(listed, before, d.media);
    else if (this.#mayFill(p, listed)) stored = await this.#fromStored(listed);
    // Stored from its list entry, the call is judged against that entry as a listed one is: a
    // lagging replica's older state (no recordings) replaced the entry's recordings when calls
    // stored from entries were fetched again after the media finding, ok (fuzz c06).
    const entry = before?.fromList ? before.call : undefined;
    const behind = entry ? olderThanListed(entry, stored?.call ?? listed) : undefined;
    if (behind) {
      unusable(`Get Call answered an older state of the call than the list entry it is stored from (${behind})`, 'unusable_detail', true);
      return;
    }
    // An audit asked again is compared as its first answer would have been (filled from its
    // entry), also when that fill is not stored below: Get Call leaving out participants made every
    // such answer provisional, and the audit was owed for good, the media finding never made.
    if (p.owedAudit && entry) {
      const got = stored?.call ?? listed;
      const rows = rowsToCompare(got);
      d.audit?.check(entry, got, rows);
      owed = false;
      // A drawn audit that agrees with the entry leaves the call as it was stored.
      if (p.drawn && !stored?.provisional && rowsDiffer(rowsToCompare(entry), rows).length === 0) return;
    }
    // What the stored answer supplies may no longer hold (fillFromStored): then this is no answer.
    if (stored?.provisional) {
      // Asked again to compare: the answer differs from what is stored, so details do change.
      if (p.settle) d.settle?.changedUnstated(id, p.settle);
      unusable(PROVISIONAL, 'unusable_detail', true);
      return;
    }
    const filled = stored?.call;
    const call = filled ?? listed;
    const unstated = partsUnstated(call);
    if (unstated) return unusable(unstated, 'unusable_detail');
    const text = call !== parsed.call ? (JSON.stringify(call) ?? json) : json;
    // Asked again to compare: an answer stating nothing new leaves the stored call as it is.
    if (p.settle && d.settle && !d.settle.changed(id, p.settle, call, text, d.media?.noneOf(false))) return;
    const row = this.#store(call, text, p, now, w, onLive);
    if (p.audit) d.audit?.check(p.call, call, row);
  }

  /**
   * A call the database holds, asked for again (live, retried, unsettled) or listed anew, whose
   * answer (with its entry's fields) leaves something out: that comes from the answer it was last
   * written from (an answer without participants or recordings deleted the stored ones, ok: probe
   * round 11 F1). Undefined when nothing was filled. `provisional`: what it filled may no longer
   * hold (see fillFromStored). Asked only when #mayFill (a call asked by id has it read in #one):
   * a whole answer, or a call not stored, costs no read (and no await on the hot path of a first sync).
   */
  async #fromStored(call: ApiCall): Promise<{ call: ApiCall; provisional: boolean } | undefined> {
    const before = await this.d.storedAnswer?.(call.sessionId);
    // Asked only for a listed call (#mayFill): its entry was silent too.
    return before !== undefined ? fillFromStored(call, before, this.d.media, true) : undefined;
  }

  #mayFill(p: Pending, call: ApiCall): boolean {
    return !p.settle && p.json !== undefined && p.stored === true && this.d.storedAnswer !== undefined && lacksParts(call);
  }

  /** The rows of a call Get Call supplied (its text `json`), and it leaves the retry list. */
  #store(call: ApiCall, json: string, p: Pending, now: number, w: PageWrite, onLive: (id: string) => void): CallRows {
    const { d } = this;
    const row = apiCallToRows(call, undefined, { appId: d.appId, region: d.region, now, source: 'detail', listFingerprint: p.listFingerprint, rawJson: json });
    if (p.json !== undefined && row.call.is_final === 0) onLive(call.sessionId);
    if (looksUnsettled(row) || awaitsFiles(row)) this.fetched.add(call.sessionId);
    if (isGroupReceiver(row.call.receiver_type) && row.call.receiver) this.groups.add(row.call.receiver);
    w.rows.push(row);
    w.cleared.push(call.sessionId);
    return row;
  }
}
