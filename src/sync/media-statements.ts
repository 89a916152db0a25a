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

/** Who stated it: Get Call's answers, List Calls' entries, or anything (stored answers too). */
type Source = 'get' | 'list' | 'any';
type Said = Record<MediaKind, { yes: number; no: number }>;
const noneSaid = (): Said => ({ recordings: { yes: 0, no: 0 }, transcriptions: { yes: 0, no: 0 } });

/**
 * How this run's service states that a call has no recordings (or transcriptions): with
 * `hasRecording: false`, or by leaving the field out, as Go's `omitempty` and many JSON encoders do
 * with a false value. api-facts.md documents neither. It matters when a stored call's current
 * statements (its list entry and Get Call's answer) both leave media out: the stored recordings were
 * kept (filled from the stored answer) and a service that drops `hasRecording` when false deleted
 * them, so a recording deleted at the service stayed billed, ok (helper-63 F4, session 29).
 *
 * Get Call's own answers in this run decide first: once one stated `false`, silence is only unsaid
 * (the stored media stay); once one stated media (`true`, or recordings carried) and none `false`,
 * Get Call leaves `false` out, so silence reads as "none" (a service whose list states `false` and
 * whose Get Call leaves it out kept deleted recordings, ok, judged by the list: helper-66). For a
 * listed call whose entry is silent too, List Calls' entries decide next, the same way (a list
 * carrying recordings without a flag, silent on this call: it has none). Then the flags of
 * everything, the answers earlier runs stored (MEDIA_HISTORY) too: `false` seen, unsaid, unless
 * nothing this run stated media at all (the service stopped stating them: a doubt, the stored media
 * stay and the run is partial); only `true`, none (every recording of an omitempty service deleted;
 * a call asked by id with no answer of this run stating media yet); nothing, unsaid, as before. A run that read silence as "none" and then meets a `false` from the
 * same source has no proof for what it read (`contradiction`: the run is partial).
 */
export class MediaStatements {
  readonly #said: Record<Source, Said> = { get: noneSaid(), list: noneSaid(), any: noneSaid() };
  readonly #readAsNone: Record<Source, Record<MediaKind, string[]>> = {
    get: { recordings: [], transcriptions: [] }, list: { recordings: [], transcriptions: [] }, any: { recordings: [], transcriptions: [] },
  };

  /** Notes what an answer (`get`), a list entry (`list`) or a stored answer states of its media. */
  see(call: ApiCall | undefined, source: Source = 'any'): void {
    if (call === undefined) return;
    for (const kind of ['recordings', 'transcriptions'] as const) {
      const v = call[FLAG[kind]];
      if (v === true) this.#said.any[kind].yes++;
      else if (v === false) this.#said.any[kind].no++;
      if (source === 'any') continue;
      // An endpoint carrying media, flag or not, shows that its view states them.
      const carries = v === true || (kind === 'recordings' ? (call.recordings?.length ?? 0) > 0 || call.recordingUrl != null : (call.transcriptions?.length ?? 0) > 0);
      if (v === false) this.#said[source][kind].no++;
      else if (carries) this.#said[source][kind].yes++;
    }
  }

  /**
   * What `call`'s silence on `kind` means; undefined when the call is not silent on it (it states the
   * flag or carries the media). A "none" is remembered for `contradiction`.
   */
  silence(call: ApiCall, kind: MediaKind, listed: boolean): Silence | undefined {
    if (call[FLAG[kind]] != null || call[kind] != null || (kind === 'recordings' && call.recordingUrl != null)) return undefined;
    const { reading, source } = this.#read(kind, listed);
    if (reading === 'none') this.#readAsNone[source][kind].push(call.sessionId);
    return reading;
  }

  /** For each kind, whether silence on it reads as none as this run's statements stand (see the class); `listed`: the call's list entry is silent too. */
  noneOf(listed: boolean): Record<MediaKind, boolean> {
    return { recordings: this.#read('recordings', listed).reading === 'none', transcriptions: this.#read('transcriptions', listed).reading === 'none' };
  }

  #read(kind: MediaKind, listed: boolean): { reading: Silence; source: Source } {
    for (const source of listed ? (['get', 'list'] as const) : (['get'] as const)) {
      const said = this.#said[source][kind];
      if (said.no > 0) return { reading: 'unsaid', source };
      if (said.yes > 0) return { reading: 'none', source };
    }
    const any = this.#said.any[kind];
    // Stated `false` before (stored answers) and nothing of media at all this run: the service stopped
    // stating them, which tells nothing of this call's (a recording deleted then stayed, ok).
    const run = this.#said.get[kind].yes + this.#said.get[kind].no + this.#said.list[kind].yes + this.#said.list[kind].no;
    if (any.no > 0) return { reading: run === 0 ? 'doubt' : 'unsaid', source: 'any' };
    // Only `true` ever stated: omitempty (a known gap: a Get view without media beside a list that
    // leaves false out reads a call asked by id as having none, and its stored recordings go).
    return { reading: any.yes > 0 ? 'none' : 'unsaid', source: 'any' };
  }

  /** Why what this run read as "none" is not proved (the same source said `false` after all), or undefined. */
  contradiction(): string | undefined {
    for (const source of ['get', 'list', 'any'] as const) {
      for (const kind of ['recordings', 'transcriptions'] as const) {
        const ids = this.#readAsNone[source][kind];
        if (ids.length === 0 || this.#said[source][kind].no === 0) continue;
        return `${ids.length} call(s) stated without ${FLAG[kind]} were taken to have no ${kind} (${source === 'get' ? 'Get Call' : source === 'list' ? 'List Calls' : 'the service'} had stated only \`${FLAG[kind]}: true\` so far), then it stated \`${FLAG[kind]}: false\` of other calls: their stored ${kind} were removed while the service may still have them (first: ${ids[0]!.slice(0, 80)})`;
      }
    }
    return undefined;
  }
}
