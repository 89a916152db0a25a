import type { ApiCall } from '../source/schemas.js';

/** The two kinds of media a call's statements may leave unsaid. */
export type MediaKind = 'recordings' | 'transcriptions';

/**
 * What statements silent on a kind of media mean, as this run's statements show it: `none`, the call
 * has none; `unsaid`, nothing (the stored media stay); `doubt`, not known (the run is partial).
 */
export type Silence = 'none' | 'unsaid' | 'doubt';

const FLAG = { recordings: 'hasRecording', transcriptions: 'hasTranscription' } as const;

/**
 * Stored answers of earlier runs each run reads first (the newest final calls): a run whose own
 * statements come in an order that puts a silent answer first (a settle audit's draw, the retry
 * list's calls) read it as a doubt, and the call was partial on every run (session 30).
 */
export const MEDIA_HISTORY = 200;

/**
 * How this run's service states that a call has no recordings (or transcriptions): with
 * `hasRecording: false`, or by leaving the field out, as Go's `omitempty` and many JSON encoders do
 * with a false value. api-facts.md documents neither. It matters when a stored call's current
 * statements (its list entry and Get Call's answer) both leave media out: the stored recordings were
 * kept (filled from the stored answer) and a service that drops `hasRecording` when false deleted
 * them, so a recording deleted at the service stayed billed, ok (helper-63 F4, session 29).
 *
 * Silence reads as "none" only when this run (and the answers earlier runs stored: MEDIA_HISTORY)
 * has seen the service say `true` of some call and never `false`: the service then states only the
 * true value. Seen `false` too, silence is only unsaid and
 * the stored media stay, as before. Seen neither, the service states nothing of media this run while
 * the stored answer did: all of them deleted by an omitempty service, or a service that stopped
 * stating them; which is not known (a doubt: the stored media stay and the run is partial). A run
 * that read silence as "none" and sees `false` afterwards has no proof for what it read
 * (`contradiction`: the run is partial).
 */
export class MediaStatements {
  readonly #said = { recordings: { yes: 0, no: 0 }, transcriptions: { yes: 0, no: 0 } };
  readonly #readAsNone = { recordings: [] as string[], transcriptions: [] as string[] };

  /** Notes what a list entry, an answer or a stored answer states of its media (called for every one parsed). */
  see(call: ApiCall | undefined): void {
    if (call === undefined) return;
    for (const kind of ['recordings', 'transcriptions'] as const) {
      const v = call[FLAG[kind]];
      if (v === true) this.#said[kind].yes++;
      else if (v === false) this.#said[kind].no++;
    }
  }

  /**
   * What `call`'s silence on `kind` means; undefined when the call is not silent on it (it states the
   * flag or carries the media). A "none" is remembered for `contradiction`.
   */
  silence(call: ApiCall, kind: MediaKind): Silence | undefined {
    if (call[FLAG[kind]] != null || call[kind] != null || (kind === 'recordings' && call.recordingUrl != null)) return undefined;
    const reading = this.reading(kind);
    if (reading === 'none') this.#readAsNone[kind].push(call.sessionId);
    return reading;
  }

  /** What silence on `kind` means as this run's statements stand (see the class). */
  reading(kind: MediaKind): Silence {
    const said = this.#said[kind];
    if (said.no > 0) return 'unsaid';
    return said.yes === 0 ? 'doubt' : 'none';
  }

  /** Why what this run read as "none" is not proved (the service said `false` after all), or undefined. */
  contradiction(): string | undefined {
    for (const kind of ['recordings', 'transcriptions'] as const) {
      const ids = this.#readAsNone[kind];
      if (ids.length === 0 || this.#said[kind].no === 0) continue;
      return `${ids.length} call(s) stated without ${FLAG[kind]} were taken to have no ${kind} (the service had stated only \`${FLAG[kind]}: true\` so far), then it stated \`${FLAG[kind]}: false\` of other calls: their stored ${kind} were removed while the service may still have them (first: ${ids[0]!.slice(0, 80)})`;
    }
    return undefined;
  }
}
