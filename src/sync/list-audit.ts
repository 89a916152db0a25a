import { randomInt } from 'node:crypto';
import type { ApiCall } from '../source/schemas.js';
import type { Db } from '../store/compiled-statements.js';
import type { CallRows } from '../store/schema.js';
import { getSetting, saveSetting } from '../store/settings-repo.js';
import { rowsToCompare } from '../transform/call-rows.js';
import { rowsDiffer } from '../transform/compare-rows.js';
import { mediaOf } from './answer-check.js';

/** Audits of the first complete-looking entries of a run, whatever they carry. */
export const FIRST_AUDITS = 8;
/**
 * Audits spread over the rest of the run: one complete-looking entry drawn at random among the
 * 16th to 31st, one among the 32nd to 63rd, and so on, and the same among those with media (at most
 * this many of each). A service whose older entries are shaped differently (a cap on recordings
 * only older calls reach, an older format) is not met by the first entries. Drawn, not fixed: at
 * the 16th, 32nd, 64th… entry, a list whose entries collapsed a second device on every 20th call
 * met none of them, and those devices were never stored, ok, also after `sync --full` (session
 * 28's probe, helper-60); entries that differ on a share of the calls now meet a draw as often.
 */
export const SPREAD_AUDITS = 8;
/** Audits of the first entries carrying recordings or transcriptions (counting those audited above). */
export const MEDIA_AUDITS = 8;
/**
 * Audits of entries carrying more media than any audited before them in the run: a list that caps
 * the media it shows per entry (3 of an older call's 5 recordings, while the newer entries audited
 * first each had 1) looks whole on every entry the cap does not reach (a hostile fake: 2 of 35
 * recordings lost, ok).
 */
export const RICHEST_AUDITS = 4;
/** The most Get Calls a run spends on audits: a few dozen, near nothing beside a night's calls. */
export const AUDITS_PER_RUN = FIRST_AUDITS + 2 * SPREAD_AUDITS + MEDIA_AUDITS + RICHEST_AUDITS;

/** The `callsync_settings` key that remembers, per app and region, that list entries leave media out. */
export function omitsMediaSetting(appId: string, region: string): string {
  return `list_entries_omit_media:${appId}:${region}`;
}

/** The `callsync_settings` key that remembers that list entries state something other than Get Call. */
export function differsSetting(appId: string, region: string): string {
  return `list_entries_differ:${appId}:${region}`;
}

/** Calls stored from their list entry that are fetched again: those with media, or all of them. */
export type RefetchListed = 'media' | 'all' | undefined;

const isPowerOfTwo = (n: number): boolean => (n & (n - 1)) === 0;

/** An integer in [0, n), unpredictable to the service (see SPREAD_AUDITS). */
export type Draw = (n: number) => number;
const draw: Draw = (n) => randomInt(n);

/** A call stored from its list entry, drawn to be compared with that entry again. */
export type Drawn = { sessionId: string; listFingerprint: string | null };

/**
 * Which entry of each window [2^k, 2^(k+1)), k ≥ 4, is a spread audit: drawn at the window's first
 * entry (how many entries are to come is not known before they are listed). A drawn entry that is
 * audited already for another reason passes its draw to the next entry that is not, so each draw
 * costs a Get Call of its own. When the listing ends before a draw is served, an entry of the
 * window stored as listed is audited after it instead (`take`; held by reservoir sampling, two ids
 * whatever the window's size). So a run's count of spread audits depends only on how many entries
 * it listed, not on the draws (`sync --dry-run` counts the same).
 */
class SpreadDraw {
  #at = 0;
  /** Draws reached and not yet served. */
  #owed = 0;
  /** Whether the current window's draw is still ahead. */
  #ahead = false;
  /** Of the current window, entries stored as listed so far, and two drawn among them. */
  #offered = 0;
  #held: Drawn[] = [];
  constructor(private readonly draw: Draw) {}

  /** The n-th entry (counted from 1) arrives. */
  arrive(n: number): void {
    if (n >= 16 && isPowerOfTwo(n)) {
      this.#at = n + this.draw(n);
      this.#ahead = true;
      this.#offered = 0;
      this.#held = [];
    }
    if (n === this.#at && this.#ahead) {
      this.#ahead = false;
      this.#owed++;
    }
  }

  /** Whether a draw waits for an entry not audited otherwise. */
  get due(): boolean {
    return this.#owed > 0;
  }

  /** The current entry serves a draw. */
  serve(): void {
    this.#owed--;
  }

  /** An entry of the current window stored as listed (a reservoir of two: each kept with chance 2 / offered). */
  offer(sessionId: string, listFingerprint: string | null): void {
    const i = this.draw(++this.#offered);
    if (this.#held.length < 2) this.#held.push({ sessionId, listFingerprint });
    else if (i < 2) this.#held[i] = { sessionId, listFingerprint };
  }

  /** After the listing: how many draws were not served, and the entries held to serve them instead. Once. */
  take(): { owed: number; held: Drawn[] } {
    const out = { owed: this.#owed + (this.#ahead ? 1 : 0), held: this.#held };
    this.#owed = 0;
    this.#ahead = false;
    this.#held = [];
    return out;
  }
}

/** The budgets an audit was routed under (given back when it gets no comparable answer). */
type Slot = 'first' | 'spread' | 'spreadMedia' | 'media' | 'rich';

/** Whether an audit's media count toward the most audited (see route): audits not drawn. */
const counts = (slots: readonly Slot[]): boolean => slots.some((x) => x !== 'spread' && x !== 'spreadMedia');

/**
 * Whether complete-looking list entries are what Get Call answers. The list's fields are not
 * documented (entries "can include" participants and media), so an entry that carries everything
 * listEntryIsComplete asks for may still hold less or other: some of the recordings, minutes
 * rounded to integers, one participant per user where Get Call has one per device (a hostile fake,
 * round 8: each ok). It is checked at run time: each run fetches some complete-looking entries with
 * Get Call (the first ones, then ones drawn at random spread over the run, and those with media as
 * above) and compares the rows each would store; follow-ups also draw a few calls stored from their
 * entries by earlier runs. When Get Call shows more media, list entries with media are not
 * trusted again for that app and region; when it states anything else, no list entry is: both are
 * remembered in `callsync_settings`, and the calls stored from such entries are fetched again (see
 * follow-ups). A call that changed between its listing and its Get looks the same; that costs
 * requests, never minutes. An audit whose Get Call gives no comparable answer is not done (see
 * unanswered): it stays on the retry list until an answer is compared with its entry.
 */
export class ListAudit {
  /** Complete-looking entries routed in this run. */
  #seen = 0;
  /** Of them, those carrying media. */
  #seenMedia = 0;
  #first = FIRST_AUDITS;
  #spread = SPREAD_AUDITS;
  #spreadMedia = SPREAD_AUDITS;
  #media = MEDIA_AUDITS;
  #rich = RICHEST_AUDITS;
  /**
   * The most media items (recordings and transcriptions) of an entry audited in this run, not by a
   * draw, answered or still awaiting its answer (so that entries routed meanwhile are not all
   * audited as richer).
   */
  #mostAudited = 0;
  /** Of them, the most of an audit Get Call answered comparably. */
  #mostAnswered = 0;
  /** Audits routed in this run still awaiting a comparable answer: their media items and the budgets they took. */
  readonly #open = new Map<string, { items: number; slots: Slot[] }>();
  /**
   * Budgets given back by audits that got no comparable answer, at most this many in a run: a
   * service that never answers one comparably does not make every entry an audit.
   */
  #returns = AUDITS_PER_RUN;
  #omits: string | undefined;
  #differs: string | undefined;
  /** What this run found: media left out, or anything else stated otherwise. */
  #foundMedia: string | undefined;
  #foundDiffers: string | undefined;
  /** Findings already saved (see save: it is called again after the follow-up passes). */
  #saved = { media: false, differs: false };
  readonly #spreadDraw: SpreadDraw;
  readonly #spreadMediaDraw: SpreadDraw;

  /**
   * Why earlier runs stopped trusting entries with media (`omits`) or any entry (`differs`).
   * `pick` draws the spread audits (tests pass their own to know where they fall).
   */
  constructor(omits: string | undefined, differs: string | undefined = undefined, pick: Draw = draw) {
    this.#omits = omits;
    this.#differs = differs;
    this.#spreadDraw = new SpreadDraw(pick);
    this.#spreadMediaDraw = new SpreadDraw(pick);
  }

  static async load(db: Db, appId: string, region: string): Promise<ListAudit> {
    return new ListAudit(await getSetting(db, omitsMediaSetting(appId, region)), await getSetting(db, differsSetting(appId, region)));
  }

  /** A complete-looking list entry: stored as listed, fetched (entries not trusted), or audited. */
  route(call: ApiCall, listFingerprint: string | null = null): 'list' | 'get' | 'audit' {
    if (this.#differs !== undefined) return 'get';
    const m = mediaOf(call);
    const items = m.recordings + m.transcriptions;
    if (items > 0 && this.#omits !== undefined) return 'get';
    const n = ++this.#seen;
    this.#spreadDraw.arrive(n);
    const k = items > 0 ? ++this.#seenMedia : 0;
    if (k > 0) this.#spreadMediaDraw.arrive(k);
    const slots: Slot[] = [];
    if (this.#first > 0) {
      this.#first--;
      slots.push('first');
    }
    if (items > 0 && this.#media > 0) {
      this.#media--;
      slots.push('media');
    }
    // Drawn audits take entries not audited otherwise (see SpreadDraw), and do not count toward the
    // most media audited: which entries they meet is chance, and `rich` would follow it.
    if (slots.length === 0 && this.#spreadDraw.due && this.#spread > 0) {
      this.#spreadDraw.serve();
      this.#spread--;
      slots.push('spread');
    } else if (slots.length === 0 && items > 0 && this.#spreadMediaDraw.due && this.#spreadMedia > 0) {
      this.#spreadMediaDraw.serve();
      this.#spreadMedia--;
      slots.push('spreadMedia');
    } else if (slots.length === 0 && items > 0 && this.#rich > 0 && items > this.#mostAudited) {
      this.#rich--;
      slots.push('rich');
    }
    if (items > 0 && counts(slots)) this.#mostAudited = Math.max(this.#mostAudited, items);
    if (slots.length === 0) {
      this.#spreadDraw.offer(call.sessionId, listFingerprint);
      if (items > 0) this.#spreadMediaDraw.offer(call.sessionId, listFingerprint);
      return 'list';
    }
    this.#open.set(call.sessionId, { items, slots });
    return 'audit';
  }

  /**
   * After the listing: the spread audits whose drawn entry the listing ended before (see
   * SpreadDraw), each an entry stored as listed, to be asked for with Get Call and compared with
   * that entry as an audit owed (see follow-ups). Once: the windows are closed.
   */
  unreachedDraws(): Drawn[] {
    const all = this.#spreadDraw.take();
    const media = this.#spreadMediaDraw.take();
    const out: Drawn[] = [];
    if (this.#differs !== undefined) return out;
    for (const d of all.held.slice(0, Math.min(all.owed, this.#spread))) out.push(d);
    this.#spread -= out.length;
    if (this.#omits !== undefined) return out;
    const taken = out.length;
    for (const d of media.held) {
      if (out.length - taken >= Math.min(media.owed, this.#spreadMedia)) break;
      if (!out.some((o) => o.sessionId === d.sessionId)) out.push(d);
    }
    this.#spreadMedia -= out.length - taken;
    return out;
  }

  /**
   * An audit that got no comparable answer (an older state than its entry, an error, nothing
   * usable, or its entry withdrawn): it does not count as done. Its budgets go back, so a later
   * entry is audited in its place, and its media no longer stand for the most audited. A lagging
   * replica answering each call's first Get with an older state spent every audit so: the finding
   * that entries cap recordings was never made, and calls stored from capped entries kept 1 of 2
   * recordings, ok (fuzz c06). The call itself is asked again (see DetailFetcher, follow-ups).
   */
  unanswered(call: ApiCall): void {
    const open = this.#open.get(call.sessionId);
    if (!open) return;
    this.#open.delete(call.sessionId);
    if (this.#returns > 0) {
      this.#returns--;
      for (const slot of open.slots) {
        if (slot === 'first') this.#first++;
        else if (slot === 'spread') this.#spread++;
        else if (slot === 'spreadMedia') this.#spreadMedia++;
        else if (slot === 'media') this.#media++;
        else this.#rich++;
      }
    }
    this.#mostAudited = this.#mostAnswered;
    for (const o of this.#open.values()) if (counts(o.slots)) this.#mostAudited = Math.max(this.#mostAudited, o.items);
  }

  /** An audited call Get Call answered with its list entry's own text: done, nothing differs. */
  agreed(listed: ApiCall): void {
    this.#answered(listed);
  }

  /** The audit of `listed` got a comparable answer: it counts as done. */
  #answered(listed: ApiCall): void {
    const l = mediaOf(listed);
    const open = this.#open.get(listed.sessionId);
    if (open && this.#open.delete(listed.sessionId) && counts(open.slots)) this.#mostAnswered = Math.max(this.#mostAnswered, l.recordings + l.transcriptions);
  }

  /** Compares what Get Call answered for an audited call (`got`, as it is stored, and its rows) with its list entry. */
  check(listed: ApiCall, got: ApiCall, gotRows: CallRows): void {
    this.#answered(listed);
    if (this.#differs !== undefined) return;
    const l = mediaOf(listed);
    const id = listed.sessionId.slice(0, 80);
    const g = mediaOf(got);
    // More media in Get Call is the media finding (also for audits already under way when it was made).
    if (g.recordings > l.recordings || g.transcriptions > l.transcriptions) {
      // None listed of a kind Get Call has: entries showing no media are not whole either (entries
      // carrying no transcription fields, or `recordings: []` without hasRecording, while Get Call
      // has them: a hostile fake, probe round 9, kept 5 of 40 with the media finding made, ok,
      // because only entries showing media were fetched after it). No entry is trusted then.
      if ((l.recordings === 0 && g.recordings > 0) || (l.transcriptions === 0 && g.transcriptions > 0)) {
        this.#differs = `List Calls entries leave out a kind of media altogether (call ${id}: ${l.recordings} recording(s) and ${l.transcriptions} transcription(s) listed, ${g.recordings} and ${g.transcriptions} in Get Call)`;
        this.#foundDiffers = this.#differs;
        return;
      }
      if (this.#omits !== undefined) return;
      this.#omits = `List Calls entries leave media out (call ${id}: ${l.recordings} recording(s) and ${l.transcriptions} transcription(s) listed, ${g.recordings} and ${g.transcriptions} in Get Call)`;
      this.#foundMedia = this.#omits;
      return;
    }
    // Only the compared columns matter: the bookkeeping ones (app, times of the sync) are left empty.
    const differ = rowsDiffer(rowsToCompare(listed), gotRows);
    if (differ.length === 0) return;
    this.#differs = `List Calls entries differ from Get Call (call ${id}: ${differ.join(', ')})`;
    this.#foundDiffers = this.#differs;
  }

  /** Which calls stored from their list entry are to be fetched again. */
  get refetchListed(): RefetchListed {
    return this.#differs !== undefined ? 'all' : this.#omits !== undefined ? 'media' : undefined;
  }

  /**
   * Remembers what this run found against the app and region. Returns the line to log (once) and
   * why, when this run found anything not saved before: it is called after the listing, and again
   * after the follow-up passes (an audit asked again there may make a finding).
   */
  async save(db: Db, appId: string, region: string): Promise<{ line: string; reason: string } | undefined> {
    const media = this.#foundMedia !== undefined && !this.#saved.media;
    const differs = this.#foundDiffers !== undefined && !this.#saved.differs;
    if (media) await saveSetting(db, omitsMediaSetting(appId, region), this.#foundMedia!);
    if (differs) await saveSetting(db, differsSetting(appId, region), this.#foundDiffers!);
    this.#saved = { media: this.#saved.media || media, differs: this.#saved.differs || differs };
    if (differs) return { reason: this.#foundDiffers!, line: 'list entries state something other than Get Call: every call is fetched with Get Call from now on, and those stored as listed are fetched again' };
    if (media) return { reason: this.#foundMedia!, line: 'list entries leave media out: entries with recordings or transcriptions are fetched with Get Call from now on, and those stored as listed are fetched again' };
    return undefined;
  }
}
