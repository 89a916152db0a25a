import type { Kysely } from 'kysely';
import type { Dispatcher } from 'undici';
import type { AppSettings, Settings } from '../config/load.js';
import { redact } from '../config/secret.js';
import { CallsApi } from '../source/calls-api.js';
import { ApiError, namesApp } from '../source/errors.js';
import { AppHttpClient } from '../source/http-client.js';
import { RequestPacer } from '../source/request-pacer.js';
import type { ApiCall } from '../source/schemas.js';
import type { CallRows, Database } from '../store/schema.js';
import { unixSeconds, type Clock } from '../config/clock.js';
import { apiCallToRows, callTime, fingerprintJson, parseCall } from '../transform/call-rows.js';
import { callDifferences, carriesParticipants, carriesRecordings, type StoredChildren } from './compare-call.js';
import { listWindow, looseEntryTime, type ListingOutcome } from './list-window.js';
import { countRejectedListedOnly, countStoredCalls } from '../store/calls-repo.js';
import { countStoredInWindow, countListedBeyondStored, loadLiveInWindow, loadRejectedKeys, loadStoredCalls, loadStoredChildren, storedNotListed, type VerifyWindow } from './stored-state.js';

export interface VerifyDeps {
  readonly db: Kysely<Database>;
  readonly dispatcher: Dispatcher;
  readonly clock: Clock;
}

/** One app's comparison of the service's listing with the database, over one window. */
export interface AppVerification {
  appId: string;
  region: string;
  /** Distinct calls listed with a time in the window (rejected ones included). */
  listed: number;
  /** Calls stored with a time in the window, in any state. */
  stored: number;
  missing: string[];
  changed: string[];
  extra: string[];
  rejected: string[];
  /** Per changed call, the stored columns that differ from its list entry. */
  changedFields: Record<string, string[]>;
  /** False when the listing could not be proved whole: then missing/extra prove nothing either way. */
  listingComplete: boolean;
  /** One line: why the listing is not complete, or what stopped the app. */
  problem?: string;
  listing?: Pick<ListingOutcome, 'order' | 'pages' | 'distinct' | 'reportedTotal' | 'stoppedEarly'>;
}

/** True when the app's stored calls agree with the listing and the listing is proved whole. */
export function appVerified(v: AppVerification): boolean {
  return v.listingComplete && v.problem === undefined && v.missing.length === 0 && v.changed.length === 0 && v.extra.length === 0;
}

/**
 * The Calls API of one app through the same client and pacing as sync, or why it cannot be used
 * (the key's variable unset: named, never the key).
 */
export function openCallsApi(deps: VerifyDeps, settings: Settings, app: AppSettings, signal?: AbortSignal): CallsApi | { problem: string } {
  if (!app.apiKey) return { problem: `app ${app.appId} (${app.region}): environment variable ${app.apiKeyEnv} is not set; export the app's REST API key (fullAccess) in it` };
  const client = new AppHttpClient({
    appId: app.appId, region: app.region, apiKey: app.apiKey, dispatcher: deps.dispatcher,
    pacer: new RequestPacer(app.requestsPerMinute, deps.clock), clock: deps.clock,
    timeoutMs: settings.requestTimeoutMs, maxAttempts: settings.maxAttempts, retryBaseMs: settings.retryBaseMs, maxResponseBytes: settings.maxResponseBytes,
    ...(signal ? { signal } : {}),
  });
  return new CallsApi(client, app.callsBaseUrl);
}

/** A service error as one line naming the app and region, the key redacted. */
export function apiProblem(app: AppSettings, err: ApiError): string {
  const msg = namesApp(err, app.appId) ? err.message : `app ${app.appId} (${app.region}): ${err.message}`;
  return redact(msg, app.apiKey ? [app.apiKey] : []);
}

function emptyResult(app: AppSettings): AppVerification {
  return { appId: app.appId, region: app.region, listed: 0, stored: 0, missing: [], changed: [], extra: [], rejected: [], changedFields: {}, listingComplete: false };
}

function inWindow(time: number | null, w: VerifyWindow): boolean {
  if (w.since === undefined && w.until === undefined) return true;
  return time !== null && (w.since === undefined || time >= w.since) && (w.until === undefined || time < w.until);
}

/** One list entry as verify sees it. */
type Entry =
  | { id: string; ok: true; call: ApiCall; rows: CallRows; fp: string }
  | { id: string; ok: false; hasId: boolean };

/**
 * Re-lists the app (List Calls only, paced like sync) and compares every entry in the window with
 * the database:
 * - missing: listed, not stored (and not a rejected record);
 * - changed: stored, but its `list_fingerprint` differs and a field it carries differs (see
 *   callDifferences), or the entry no longer parses;
 * - extra: stored live with a time in the window, and nowhere in the listing;
 * - rejected: listed, not stored, and filed in `rejected_records` (they do not fail verify).
 * Never throws for the service's failures: they become `problem`.
 */
export async function verifyApp(deps: VerifyDeps, settings: Settings, app: AppSettings, api: CallsApi, window: VerifyWindow, signal?: AbortSignal): Promise<AppVerification> {
  const { db } = deps;
  const r = emptyResult(app);
  /** Stored live calls not (yet) seen in the listing: what is left at its end is extra. */
  const liveStored = await loadLiveInWindow(db, app.appId, window);
  // Ids, not entries, are kept: memory grows with the calls in the window (about 100 bytes each),
  // and the report names every missing, changed and rejected one anyway.
  const listed = new Set<string>();
  /** Every id listed, in the window or not (a call whose time moved out of it is not gone). */
  const seen = new Set<string>();
  const missing = new Set<string>();
  const rejected = new Set<string>();
  const changed = new Map<string, string[]>();
  // A call listed twice (calls inserted while paging push entries down; a second pass) is judged
  // by its latest entry.
  const settle = (id: string, verdict: 'ok' | 'missing' | 'rejected' | string[]): void => {
    missing.delete(id);
    rejected.delete(id);
    changed.delete(id);
    if (verdict === 'missing') missing.add(id);
    else if (verdict === 'rejected') rejected.add(id);
    else if (Array.isArray(verdict)) changed.set(id, verdict);
  };
  let entriesSeen = 0;

  const onPage = async (page: readonly unknown[]): Promise<void> => {
    const now = unixSeconds(deps.clock);
    const entries: Entry[] = [];
    for (const raw of page) {
      const fallback = `<list entry ${++entriesSeen} without a sessionId>`;
      const parsed = parseCall(raw, fallback);
      const id = parsed.ok ? parsed.call.sessionId : parsed.key;
      // Listed anywhere, in the window or not: not extra.
      liveStored.delete(id);
      seen.add(id);
      if (parsed.ok) {
        if (!inWindow(callTime(parsed.call), window)) continue;
        const json = JSON.stringify(raw) ?? 'undefined';
        const rows = apiCallToRows(parsed.call, raw, { appId: app.appId, region: app.region, now, source: 'list', listFingerprint: null, rawJson: json });
        entries.push({ id, ok: true, call: parsed.call, rows, fp: fingerprintJson(json) });
      } else {
        // An entry that does not parse has no trusted time: the same fields, read leniently; one with
        // none at all cannot be placed, so it is counted in any window rather than lost.
        const time = looseEntryTime(raw);
        if (time !== null && !inWindow(time, window)) continue;
        entries.push({ id, ok: false, hasId: id !== fallback });
      }
    }
    if (entries.length === 0) return;
    const ids = entries.map((e) => e.id);
    const stored = await loadStoredCalls(db, app.appId, ids);
    // An entry that does not parse may name a call stored from Get Call (sync asks for it): filed
    // under rejected_records all the same.
    const rejectedKeys = await loadRejectedKeys(db, app.appId, entries.filter((e) => !e.ok || !stored.has(e.id)).map((e) => e.id));
    const deep = entries.filter((e): e is Extract<Entry, { ok: true }> => {
      if (!e.ok) return false;
      const s = stored.get(e.id);
      return s !== undefined && s.list_fingerprint !== e.fp && (carriesParticipants(e.call) || carriesRecordings(e.call, e.rows));
    });
    const children = deep.length ? await loadStoredChildren(db, app.appId, deep.map((e) => e.id)) : new Map<string, StoredChildren>();

    for (const e of entries) {
      listed.add(e.id);
      const s = stored.get(e.id);
      if (!e.ok) {
        // Sync files an entry it cannot parse under rejected_records and leaves any stored row alone.
        if (!e.hasId || rejectedKeys.has(e.id)) settle(e.id, 'rejected');
        else settle(e.id, s ? ['unparseable'] : 'missing');
        continue;
      }
      if (!s) {
        settle(e.id, rejectedKeys.has(e.id) ? 'rejected' : 'missing');
        continue;
      }
      // The same entry sync last stored: nothing can differ.
      if (s.list_fingerprint === e.fp) {
        settle(e.id, 'ok');
        continue;
      }
      const diff = callDifferences(e.call, e.rows, s, children.get(e.id));
      settle(e.id, diff.length ? diff : 'ok');
    }
  };

  try {
    r.stored = await countStoredInWindow(db, app.appId, window);
    const { outcome, windowComplete, readToEnd } = await listWindow(api, settings.pageSize, { maxPages: settings.maxPagesPerRun, ...(window.since !== undefined ? { lowerBound: window.since } : {}), ...(signal ? { signal } : {}) }, onPage);
    r.listingComplete = windowComplete;
    // Stored live calls are extra only if the listing was read through: otherwise they may simply lie beyond where it stopped.
    if (readToEnd) r.extra = [...liveStored].sort();
    // A whole listing (not one stopped at the window's edge, past which a call that never started
    // may still be listed) shows every call the service has: a stored call it does not show is gone
    // there, and still billed here. Verify said OK with stored 30 against listed 29 (probe round 17 b, F2).
    if (readToEnd && outcome.complete && !outcome.stoppedEarly) r.extra = [...new Set([...r.extra, ...(await storedNotListed(db, app.appId, window, seen))])].sort();
    let problem = windowComplete ? undefined : outcome.problem ?? 'no reason given';
    // Stopped at the window's edge: calls listed past it (never started, sorted last) were not read.
    // The service's count tells whether any is missing, as an incremental sync checks it (a windowed
    // verify said OK with such a call missing: probe round 17 b, F1).
    if (windowComplete && outcome.stoppedEarly && outcome.reportedTotal !== undefined) {
      // Listed calls the database lacks (reported as missing when in the window), or holds marked not
      // found, are in the pages read, not past the edge.
      const held = (await countStoredCalls(db, app.appId, app.region)) + (await countRejectedListedOnly(db, app.appId, app.region)) + (await countListedBeyondStored(db, app.appId, seen));
      if (outcome.reportedTotal > held) {
        r.listingComplete = false;
        problem = `List Calls reports ${outcome.reportedTotal} calls, the database holds ${held}, and the pages read for the window (to its edge) did not show the difference: a call listed past them (one that never started sorts last) may be missing; run verify without --since/--until, or sync`;
      }
    }
    if (problem !== undefined) r.problem = `app ${app.appId} (${app.region}): the listing could not be proved complete: ${problem}`;
    r.listing = { order: outcome.order, pages: outcome.pages, distinct: outcome.distinct, reportedTotal: outcome.reportedTotal, stoppedEarly: outcome.stoppedEarly };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    r.listingComplete = false;
    r.problem = apiProblem(app, err);
  }
  r.listed = listed.size;
  r.missing = [...missing].sort();
  r.rejected = [...rejected].sort();
  r.changed = [...changed.keys()].sort();
  r.changedFields = Object.fromEntries(r.changed.map((id) => [id, changed.get(id)!]));
  return r;
}
