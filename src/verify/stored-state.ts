import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../store/schema.js';
import { groupParticipants } from '../transform/compare-rows.js';
import type { StoredCall, StoredChildren } from './compare-call.js';

/** Calls are compared in a window of their time (unix seconds, [since, until)); unset ends are open. */
export interface VerifyWindow {
  since?: number;
  until?: number;
}

/** Ids per `in (…)` list: far below either dialect's bound-parameter limit. */
const IDS_PER_QUERY = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += IDS_PER_QUERY) out.push(items.slice(i, i + IDS_PER_QUERY));
  return out;
}

/**
 * The window on a stored call: its time as `callTime` gives it for a list entry (startedAt, else
 * initiatedAt, else endedAt), so both sides are windowed alike. A started_at of 0 is a call that
 * never started (rows stored before that was NULL): it falls back like NULL.
 */
function inWindow<O>(q: SelectQueryBuilder<Database, 'calls', O>, w: VerifyWindow): SelectQueryBuilder<Database, 'calls', O> {
  const time = sql<number | null>`coalesce(nullif(started_at, 0), initiated_at, ended_at)`;
  let out = q;
  if (w.since !== undefined) out = out.where(time, '>=', w.since);
  if (w.until !== undefined) out = out.where(time, '<', w.until);
  return out;
}

/** The stored calls among `ids`, with the columns a list entry is compared with. */
export async function loadStoredCalls(db: Kysely<Database>, appId: string, ids: readonly string[]): Promise<Map<string, StoredCall>> {
  const out = new Map<string, StoredCall>();
  for (const part of chunks(ids)) {
    const rows = await db
      .selectFrom('calls')
      .select([
        'session_id', 'list_fingerprint', 'type', 'mode', 'receiver_type', 'receiver', 'initiator', 'status', 'initiated_at', 'started_at', 'ended_at', 'total_audio_minutes',
        'total_video_minutes', 'total_duration_minutes', 'total_participants', 'has_recording',
      ])
      .where('app_id', '=', appId)
      .where('session_id', 'in', part)
      .execute();
    for (const r of rows) out.set(r.session_id, r);
  }
  return out;
}

/** Participants (grouped by uid and device) and recording counts of stored calls. */
export async function loadStoredChildren(db: Kysely<Database>, appId: string, ids: readonly string[]): Promise<Map<string, StoredChildren>> {
  const out = new Map<string, StoredChildren>();
  for (const id of ids) out.set(id, { participants: new Map(), recordings: 0 });
  for (const part of chunks(ids)) {
    const parts = await db
      .selectFrom('calls as c')
      .innerJoin('call_participant_rows as p', 'p.call_id', 'c.call_id')
      .select(['c.session_id', 'p.uid', 'p.device_id', 'p.total_audio_minutes', 'p.total_video_minutes', 'p.total_duration_minutes'])
      .where('c.app_id', '=', appId)
      .where('c.session_id', 'in', part)
      .execute();
    const bySession = new Map<string, typeof parts>();
    for (const p of parts) (bySession.get(p.session_id) ?? bySession.set(p.session_id, []).get(p.session_id)!).push(p);
    for (const [id, rows] of bySession) {
      out.get(id)!.participants = groupParticipants(rows);
    }
    const recs = await db
      .selectFrom('call_recordings')
      .select(['session_id', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('app_id', '=', appId)
      .where('session_id', 'in', part)
      .groupBy('session_id')
      .execute();
    for (const r of recs) out.get(r.session_id)!.recordings = Number(r.n);
  }
  return out;
}

/** Which of `keys` have a rejected record (from List or Get Call) for this app. */
export async function loadRejectedKeys(db: Kysely<Database>, appId: string, keys: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const part of chunks(keys)) {
    const rows = await db.selectFrom('rejected_records').select('record_key').distinct().where('app_id', '=', appId).where('record_key', 'in', part).execute();
    for (const r of rows) out.add(r.record_key);
  }
  return out;
}

/** Calls stored as live (not final, not flagged not-found) whose time is in the window. */
export async function loadLiveInWindow(db: Kysely<Database>, appId: string, w: VerifyWindow): Promise<Set<string>> {
  const live = db.selectFrom('calls').select('session_id').where('app_id', '=', appId).where('is_final', '=', 0).where('not_found_at', 'is', null);
  const rows = await inWindow(live, w).execute();
  return new Set(rows.map((r) => r.session_id));
}

/** How many calls of the app are stored with a time in the window (any state). */
export async function countStoredInWindow(db: Kysely<Database>, appId: string, w: VerifyWindow): Promise<number> {
  const all = db.selectFrom('calls').select((eb) => eb.fn.countAll<number | string>().as('n')).where('app_id', '=', appId);
  const row = await inWindow(all, w).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Stored calls with a time in the window, not marked not found, that a listing read whole did not
 * show anywhere (`listed`): gone at the service. Paged by call_id, so memory holds one page of them.
 */
export async function storedNotListed(db: Kysely<Database>, appId: string, w: VerifyWindow, listed: ReadonlySet<string>): Promise<string[]> {
  const out: string[] = [];
  for (let after = 0; ; ) {
    const page = await inWindow(db.selectFrom('calls').select(['call_id', 'session_id']).where('app_id', '=', appId).where('not_found_at', 'is', null), w)
      .where('call_id', '>', after)
      .orderBy('call_id')
      .limit(10_000)
      .execute();
    if (page.length === 0) break;
    for (const r of page) if (!listed.has(r.session_id)) out.push(r.session_id);
    after = page[page.length - 1]!.call_id;
  }
  return out.sort();
}

/**
 * Of the listed `ids`, how many a count of stored calls (those not marked not found) leaves out:
 * the ones the database lacks (and has not filed in rejected_records) and the ones it holds marked
 * not found although the service lists them.
 */
export async function countListedBeyondStored(db: Kysely<Database>, appId: string, ids: Iterable<string>): Promise<number> {
  let n = 0;
  for (const part of chunks([...ids])) {
    const rows = await db.selectFrom('calls').select(['session_id', 'not_found_at']).where('app_id', '=', appId).where('session_id', 'in', part).execute();
    const stored = new Set(rows.map((r) => r.session_id));
    n += rows.filter((r) => r.not_found_at !== null).length;
    const rest = part.filter((id) => !stored.has(id));
    if (rest.length) n += rest.length - (await loadRejectedKeys(db, appId, rest)).size;
  }
  return n;
}
