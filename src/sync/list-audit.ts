import type { ApiCall } from '../source/schemas.js';
import { mediaOf } from './answer-check.js';

/**
 * Get Calls per run that audit list entries carrying recordings or transcriptions. Few enough to
 * keep a nightly run near 0.02 requests a call; with nightly runs a service that leaves media out of
 * one entry in ten is caught within a run or two (1 − 0.9^16 = 81 % a run).
 */
export const AUDITS_PER_RUN = 16;

/**
 * Of AUDITS_PER_RUN, the audits kept for entries carrying more media than any audited before them
 * in the run: a list that caps the media it shows per entry (3 of an older call's 5 recordings,
 * while the newer entries audited first each had 1) looks whole on every entry the cap does not
 * reach (a hostile fake: 2 of 35 recordings lost, ok).
 */
export const RICHEST_AUDITS = 4;

/** The `callsync_settings` key that remembers, per app and region, that list entries leave media out. */
export function omitsMediaSetting(appId: string, region: string): string {
  return `list_entries_omit_media:${appId}:${region}`;
}

/**
 * Whether a list entry's recordings and transcriptions are whole. Participants can be counted
 * against `totalParticipants`, but nothing states how many recordings a call has, and a list that
 * carries "some" of them (the documentation: entries "can include" them) looks whole. So it is
 * checked at run time: each run, the first complete-looking entries with media, and then those
 * carrying more media than any audited so far (RICHEST_AUDITS of the AUDITS_PER_RUN), are fetched
 * with Get Call and compared. Once Get Call shows more than an entry did, list entries with
 * media are never trusted again for that app and region (remembered in `callsync_settings`), and
 * the calls stored from such entries are fetched again (see follow-ups).
 */
export class ListAudit {
  #budget = AUDITS_PER_RUN - RICHEST_AUDITS;
  #richBudget = RICHEST_AUDITS;
  /** The most media items (recordings and transcriptions) of an entry audited in this run. */
  #mostAudited = 0;
  #omits: string | undefined;
  #found: string | undefined;

  /** `omits`: why an earlier run stopped trusting these entries, if one did. */
  constructor(omits: string | undefined) {
    this.#omits = omits;
  }

  /** A complete-looking list entry: stored as listed, fetched (entries not trusted), or audited. */
  route(call: ApiCall): 'list' | 'get' | 'audit' {
    const m = mediaOf(call);
    if (m.recordings === 0 && m.transcriptions === 0) return 'list';
    if (this.#omits !== undefined) return 'get';
    const items = m.recordings + m.transcriptions;
    if (this.#budget > 0) this.#budget--;
    else if (this.#richBudget > 0 && items > this.#mostAudited) this.#richBudget--;
    else return 'list';
    this.#mostAudited = Math.max(this.#mostAudited, items);
    return 'audit';
  }

  /** Compares what Get Call answered for an audited call with its list entry. */
  check(listed: ApiCall, got: ApiCall): void {
    if (this.#omits !== undefined) return;
    const l = mediaOf(listed);
    const g = mediaOf(got);
    if (g.recordings <= l.recordings && g.transcriptions <= l.transcriptions) return;
    this.#omits = `List Calls entries leave media out (call ${listed.sessionId.slice(0, 80)}: ${l.recordings} recording(s) and ${l.transcriptions} transcription(s) listed, ${g.recordings} and ${g.transcriptions} in Get Call)`;
    this.#found = this.#omits;
  }

  /** Set when entries with media are not trusted (found in this run or an earlier one). */
  get omits(): string | undefined {
    return this.#omits;
  }

  /** Set when this run found it (to remember it, and say so once). */
  get foundNow(): string | undefined {
    return this.#found;
  }
}
