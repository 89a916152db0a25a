import type { ApiCall } from '../source/schemas.js';
import type { Db } from '../store/compiled-statements.js';
import { listFetchedCalls, loadStoredCallRows, type StoredCallRows } from '../store/settle-repo.js';
import { getSetting, saveSetting } from '../store/settings-repo.js';
import { parseCall, rowsToCompare } from '../transform/call-rows.js';
import { rowsDiffer, SAME_MINUTES, SAME_VALUE, type ComparableRows } from '../transform/compare-rows.js';
import type { MediaKind } from './media-statements.js';

/** Calls fetched on an earlier run that each run asks Get Call for again, to compare. */
export const SETTLE_AUDITS = 8;
/** Of the calls that ended before the settle window, those each run asks for again (see oldCandidates). */
export const OLD_AUDITS = 2;
/**
 * A call is audited once its stored answer is this old: a run repeated soon after the last one
 * (a retry, a test, the benchmark's quiet re-run) spends no request on it.
 */
export const AUDIT_AFTER_SECONDS = 3_600;

/** The `callsync_settings` key that remembers, per app and region, that fetched details change later. */
export function detailsChangeSetting(appId: string, region: string): string {
  return `details_change_after_fetch:${appId}:${region}`;
}

/** A call asked for again to compare its answer with what the database holds of it. */
export interface SettleCheck {
  stored: StoredCallRows;
  /**
   * The answer it was last written from (its stored payload), read: what a new answer leaves out is
   * taken from it, as withEarlierFields takes it from a list entry (an answer without `participants`
   * deleted the stored ones, ok; probe round 10, F2).
   */
  previous: ApiCall | undefined;
  /** The call ended before the settle window (see oldCandidates). */
  old?: boolean;
}

/** The stored payload of a call, read as Get Call's answer; undefined when there is none or it does not parse. */
export function previousAnswer(sessionId: string, rawJson: string | null | undefined): ApiCall | undefined {
  if (rawJson === null || rawJson === undefined) return undefined;
  try {
    const parsed = parseCall(JSON.parse(rawJson) as unknown, sessionId);
    return parsed.ok ? parsed.call : undefined;
  } catch {
    return undefined;
  }
}

/** The checks of these calls: their stored rows and the answer each was last written from. */
async function checksOf(db: Db, appId: string, region: string, ids: readonly string[], old: boolean): Promise<Map<string, SettleCheck>> {
  const out = new Map<string, SettleCheck>();
  for (const [id, stored] of await loadStoredCallRows(db, appId, region, ids)) out.set(id, { stored, previous: previousAnswer(id, stored.rawJson), ...(old ? { old } : {}) });
  return out;
}

/**
 * Whether the details Get Call gave on an earlier run are still what it answers, for calls whose
 * list entry did not change (nothing else asks for them again). Nothing documents that a final
 * call's details stop changing when its entry does: a service may answer provisional minutes the
 * night a call ends and the final ones later, the list entry (which need not carry minutes) the
 * same (hostile fake, probe round 8 F7: ok, the provisional minutes kept for good). The unsettled
 * pass only catches answers that look unfinished (zero minutes, missing recordings).
 *
 * Checked at run time: each run asks again for SETTLE_AUDITS calls, drawn at random among the
 * final calls of the last settleDays that Get Call supplied on an earlier run, and compares what
 * each answer states with the rows stored. An answer that states nothing new is not written (what
 * it leaves out is not a change). When minutes, parties, participants or media differ, it is
 * written, the finding is remembered in `callsync_settings`, and from then on every run asks again
 * for every such call of the last settleDays, starting with the run that found it: that run ends
 * with the service's current details.
 */
export class SettleAudit {
  #remembered: string | undefined;
  #found: string | undefined;
  #foundOld: string | undefined;

  constructor(remembered: string | undefined) {
    this.#remembered = remembered;
  }

  static async load(db: Db, appId: string, region: string): Promise<SettleAudit> {
    return new SettleAudit(await getSetting(db, detailsChangeSetting(appId, region)));
  }

  /** Whether every fetched call of the settle window is asked for (known to change, or found in this run). */
  get refetchAll(): boolean {
    return this.#remembered !== undefined || this.#found !== undefined;
  }

  /**
   * The calls to ask for again, each with its stored rows: final calls Get Call supplied that ended
   * since `since` and were written before `writtenBefore` (by an earlier run), not in `skip`; a
   * sample of them, or all once details are known to change.
   */
  async candidates(db: Db, appId: string, region: string, o: { since: number; writtenBefore: number; skip: (id: string) => boolean }): Promise<Map<string, SettleCheck>> {
    // A few more than needed: some may be in this run's other passes already.
    const ids = (await listFetchedCalls(db, appId, region, { since: o.since, writtenBefore: o.writtenBefore, ...(this.refetchAll ? {} : { sample: 4 * SETTLE_AUDITS }) })).filter((id) => !o.skip(id));
    return checksOf(db, appId, region, this.refetchAll ? ids : ids.slice(0, SETTLE_AUDITS), false);
  }

  /**
   * OLD_AUDITS calls drawn at random from those that ended before the settle window (`until`),
   * fetched by an earlier run: nothing else asks for them again, and nothing documents that their
   * details stop changing (a service correcting minutes a week later, entries without minutes: the
   * old minutes kept for good, `sync --full` and `verify` ok, probe round 11 F3). A difference is
   * written, and the run is partial, naming the repair (see oldChange): asking for every old call
   * on every run would cost a request per call ever stored.
   */
  async oldCandidates(db: Db, appId: string, region: string, o: { until: number; writtenBefore: number; skip: (id: string) => boolean }): Promise<Map<string, SettleCheck>> {
    const ids = (await listFetchedCalls(db, appId, region, { since: 0, until: o.until, writtenBefore: o.writtenBefore, sample: 4 * OLD_AUDITS })).filter((id) => !o.skip(id));
    return checksOf(db, appId, region, ids.slice(0, OLD_AUDITS), true);
  }

  /** What a call that ended before the settle window was found to have changed, in this run. */
  get oldChange(): string | undefined {
    return this.#foundOld;
  }

  /**
   * Whether Get Call's answer for a call asked for again is to be written: it states something
   * other than what is stored. A difference in what billing reads (rowsDiffer) is also the audit's
   * finding; one in its text alone (tags, URLs) is not. Fields and lists the answer leaves out are
   * not compared (the caller fills them from the previous answer before storing it).
   */
  changed(sessionId: string, c: SettleCheck, got: ApiCall, json: string, none: Readonly<Partial<Record<MediaKind, boolean>>> = {}): boolean {
    const rows = rowsToCompare(got);
    const call: ComparableRows['call'] = { ...c.stored.call };
    for (const k of [...SAME_VALUE, ...SAME_MINUTES]) {
      const v = rows.call[k];
      if (v !== null && v !== undefined) (call as Record<string, unknown>)[k] = v;
    }
    const stated: ComparableRows = {
      call,
      participants: got.participants == null ? c.stored.participants : rows.participants,
      // No media with `hasRecording: false` (or `hasTranscription`), or silence where the service
      // leaves false out (`none`, MediaStatements), says there are none (see withEarlierFields).
      recordings: rows.recordings.length === 0 && got.recordings == null && got.hasRecording !== false && none.recordings !== true ? c.stored.recordings : rows.recordings,
      transcriptions: got.transcriptions == null && got.hasTranscription !== false && none.transcriptions !== true ? c.stored.transcriptions : rows.transcriptions,
    };
    const differ = rowsDiffer(c.stored, stated);
    if (differ.length > 0 && c.old) {
      this.#foundOld ??= `call ${sessionId.slice(0, 80)}: ${differ.join(', ')}; written`;
      return true;
    }
    // What billing reads (minutes, parties, participants, media) is the finding; anything else an
    // answer states otherwise (tags, metaData, a participant's state, media URLs, which a service
    // may sign anew each time) is written, but is no reason to ask for every call again.
    if (differ.length === 0) return json !== c.stored.rawJson;
    if (!this.refetchAll) this.#found = `Get Call answered other details than an earlier run stored, the list entry unchanged (call ${sessionId.slice(0, 80)}: ${differ.join(', ')})`;
    return true;
  }

  /**
   * An answer for a call asked again that differs from what is stored in a way that leaves the call
   * unstated (see fillFromStored: it is not written): a finding all the same, so the window's other
   * calls are asked for too (found one at a time, 1 of 30 revised calls a run: probe round 14).
   */
  changedUnstated(sessionId: string, c: SettleCheck): void {
    const why = `call ${sessionId.slice(0, 80)}: an answer that changed and leaves out what changed with it`;
    if (c.old) this.#foundOld ??= `${why}; kept as stored`;
    else if (!this.refetchAll) this.#found = `Get Call answered other details than an earlier run stored, the list entry unchanged (${why})`;
  }

  /** Remembers a finding of this run against the app and region; returns the line to log (once) and why. */
  async save(db: Db, appId: string, region: string): Promise<{ line: string; reason: string } | undefined> {
    if (this.#found === undefined || this.#remembered !== undefined) return undefined;
    await saveSetting(db, detailsChangeSetting(appId, region), this.#found);
    return { reason: this.#found, line: 'details of calls change after Get Call gave them, their list entry unchanged: every call fetched within settleDays is asked for again on each run from now on (this run included)' };
  }
}
