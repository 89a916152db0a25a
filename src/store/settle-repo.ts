import { sql, type Kysely, type Transaction } from 'kysely';
import { MAX_IDS } from './compiled-statements.js';
import type { Database } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** When a call is taken to have happened: its end, else its start, else when it was first stored. */
const WHEN = ['ended_at', 'started_at', 'initiated_at', 'first_synced_at'] as const;

export interface FetchedCallsQuery {
  /** Ended (see WHEN) at or after this, unix seconds. */
  since: number;
  /** Ended before this, unix seconds (the settle window's older side); no bound without. */
  until?: number;
  /** Last written before this, unix seconds: fetched on an earlier run. */
  writtenBefore: number;
  /** At most this many, drawn at random (each run's sample reaches other calls); all of them without. */
  sample?: number;
}

/**
 * Final calls whose details Get Call supplied, last written before `writtenBefore`. Calls known
 * gone are left out.
 */
export async function listFetchedCalls(db: Db, appId: string, region: string, q: FetchedCallsQuery): Promise<string[]> {
  let query = db
    .selectFrom('calls')
    .select('session_id')
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('is_final', '=', 1)
    .where('details_source', '=', 'detail')
    .where('not_found_at', 'is', null)
    .where('synced_at', '<', q.writtenBefore)
    .where((eb) => eb(eb.fn.coalesce(...WHEN), '>=', q.since));
  if (q.until !== undefined) query = query.where((eb) => eb(eb.fn.coalesce(...WHEN), '<', q.until!));
  // random() is SQLite's and PostgreSQL's both.
  if (q.sample !== undefined) query = query.orderBy(sql`random()`).limit(q.sample);
  return (await query.execute()).map((r) => r.session_id);
}

/**
 * `n` final calls stored from their list entry (without a detail error: those are on the retry
 * list) and last written before `writtenBefore`, drawn at random, each with the list fingerprint
 * it was stored under.
 */
export async function sampleCallsStoredFromList(db: Db, appId: string, region: string, q: { writtenBefore: number; n: number }): Promise<{ sessionId: string; listFingerprint: string | null }[]> {
  const rows = await db
    .selectFrom('calls')
    .select(['session_id', 'list_fingerprint'])
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('details_source', '=', 'list')
    .where('detail_error', 'is', null)
    .where('is_final', '=', 1)
    .where('not_found_at', 'is', null)
    .where('synced_at', '<', q.writtenBefore)
    .orderBy(sql`random()`)
    .limit(q.n)
    .execute();
  return rows.map((r) => ({ sessionId: r.session_id, listFingerprint: r.list_fingerprint }));
}

/** What a database holds of a call, as much as compare-rows' rowsDiffer reads. */
export interface StoredCallRows {
  call: {
    type: string | null; mode: string | null; receiver_type: string | null; receiver: string | null; initiator: string | null; status: string | null;
    total_participants: number | null; has_recording: number; has_transcription: number; initiated_at: number | null; started_at: number | null;
    ended_at: number | null; total_duration_seconds: number | null; total_audio_minutes: number | null; total_video_minutes: number | null; total_duration_minutes: number | null;
  };
  participants: { uid: string; device_id: string; total_audio_minutes: number | null; total_video_minutes: number | null; total_duration_minutes: number | null; is_joined: number; joined_at: number | null; left_at: number | null }[];
  recordings: { duration_minutes: number | null; start_time: number | null; end_time: number | null }[];
  transcriptions: { tid: string }[];
  /** The stored payload (the answer the call was last written from), NULL when it has none. */
  rawJson: string | null;
}

/**
 * The stored payload of one call (the answer it was last written from) and its detail_error (set:
 * the payload is its list entry, kept because Get Call gave nothing usable); undefined when none.
 */
export async function loadStoredPayload(db: Db, appId: string, region: string, sessionId: string): Promise<{ rawJson: string; detailError: string | null; source: string } | undefined> {
  const row = await db
    .selectFrom('calls')
    .innerJoin('call_payload_rows as payload', 'payload.call_id', 'calls.call_id')
    .select(['payload.raw_json as raw_json', 'calls.detail_error as detail_error', 'calls.details_source as details_source'])
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return row ? { rawJson: row.raw_json, detailError: row.detail_error, source: row.details_source } : undefined;
}

/**
 * The stored answers (payloads) of the app's `limit` most recently stored final calls, newest first,
 * with their sessionId: what the service stated of them (MediaStatements reads how it states media).
 */
export async function recentStoredAnswers(db: Db, appId: string, region: string, limit: number): Promise<{ sessionId: string; rawJson: string }[]> {
  const rows = await db
    .selectFrom('calls')
    .innerJoin('call_payload_rows as payload', 'payload.call_id', 'calls.call_id')
    .select(['calls.session_id as session_id', 'payload.raw_json as raw_json'])
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('is_final', '=', 1)
    .orderBy('calls.call_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ sessionId: r.session_id, rawJson: r.raw_json }));
}

/** The stored rows of these calls (by sessionId), read back to compare with a new answer. */
export async function loadStoredCallRows(db: Db, appId: string, region: string, sessionIds: readonly string[]): Promise<Map<string, StoredCallRows>> {
  const out = new Map<string, StoredCallRows>();
  for (let i = 0; i < sessionIds.length; i += MAX_IDS) {
    const ids = sessionIds.slice(i, i + MAX_IDS);
    const calls = await db
      .selectFrom('calls')
      .leftJoin('call_payload_rows as payload', 'payload.call_id', 'calls.call_id')
      .select([
        'calls.call_id as call_id', 'payload.raw_json as raw_json', 'session_id', 'type', 'mode', 'receiver_type', 'receiver', 'initiator', 'status', 'total_participants', 'has_recording', 'has_transcription',
        'initiated_at', 'started_at', 'ended_at', 'total_duration_seconds', 'total_audio_minutes', 'total_video_minutes', 'total_duration_minutes',
      ])
      .where('app_id', '=', appId)
      .where('region', '=', region)
      .where('session_id', 'in', ids)
      .execute();
    if (calls.length === 0) continue;
    const byCallId = new Map<number, StoredCallRows>();
    for (const { call_id, session_id, raw_json, ...call } of calls) {
      const rows: StoredCallRows = { call, participants: [], recordings: [], transcriptions: [], rawJson: raw_json };
      out.set(session_id, rows);
      byCallId.set(Number(call_id), rows);
    }
    const participants = await db
      .selectFrom('call_participant_rows')
      .select(['call_id', 'uid', 'device_id', 'total_audio_minutes', 'total_video_minutes', 'total_duration_minutes', 'is_joined', 'joined_at', 'left_at'])
      .where('call_id', 'in', [...byCallId.keys()])
      .execute();
    for (const { call_id, ...p } of participants) byCallId.get(Number(call_id))?.participants.push(p);
    const found = calls.map((c) => c.session_id);
    const recordings = await db.selectFrom('call_recordings').select(['session_id', 'duration_minutes', 'start_time', 'end_time']).where('app_id', '=', appId).where('session_id', 'in', found).execute();
    for (const { session_id, ...r } of recordings) out.get(session_id)?.recordings.push(r);
    const transcriptions = await db.selectFrom('call_transcriptions').select(['session_id', 'tid']).where('app_id', '=', appId).where('session_id', 'in', found).execute();
    for (const { session_id, tid } of transcriptions) out.get(session_id)?.transcriptions.push({ tid });
  }
  return out;
}

/**
 * Final calls whose details can still change, ended (or, without an end, started) since `since`:
 * recordings promised but absent or still without an end and a duration, transcriptions promised
 * but absent, a recording or transcription without its file's URL yet, a joined participant at zero minutes or without any (also beside others with
 * minutes), fewer participant entries than `totalParticipants`, final without an end. The list
 * entry may not change when the details do (hostile fakes answered a participant at 0 minutes, or
 * one of two participants, the night a call ended and the rest the next), so these are fetched
 * again until they settle.
 */
export async function listUnsettledCalls(db: Db, appId: string, region: string, since: number): Promise<string[]> {
  const rows = await db
    .selectFrom('calls')
    .select('session_id')
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('is_final', '=', 1)
    .where('not_found_at', 'is', null)
    .where((eb) => eb(eb.fn.coalesce(...WHEN), '>=', since))
    .where((eb) =>
      eb.or([
        eb.and([eb('has_recording', '=', 1), eb('recording_rows', '=', 0)]),
        eb.and([eb('joined_devices', '>', 0), eb('participant_total_minutes', '=', 0)]),
        eb.exists(
          eb
            .selectFrom('call_participant_rows as p')
            .select('p.seq')
            .whereRef('p.call_id', '=', 'calls.call_id')
            .where('p.is_joined', '=', 1)
            .where((w) => w.or([w('p.total_duration_minutes', '=', 0), w('p.total_duration_minutes', 'is', null)])),
        ),
        eb('ended_at', 'is', null),
        eb('participant_rows', '<', eb.ref('total_participants')),
        // A recording still being processed, looked up once for both signs:
        // - started, not ended, no duration (a recording with no times at all, as the SDK's single
        //   recordingUrl gives, never gets a duration: not waited for);
        // - stated without its file's URL (null or ''). Under an unchanged entry only the settle
        //   audit's sample asked again, and a URL alone coming is no finding that widens it: the URLs
        //   of the calls it did not draw stayed NULL for good, every run ok (probe69). Transcriptions
        //   the same, below.
        eb.exists(
          eb.selectFrom('call_recordings as r').select('r.rid').whereRef('r.app_id', '=', 'calls.app_id').whereRef('r.session_id', '=', 'calls.session_id')
            .where((w) => w.or([
              w.and([w('r.duration_minutes', 'is', null), w('r.start_time', 'is not', null), w('r.end_time', 'is', null)]),
              w('r.recording_url', 'is', null),
              w('r.recording_url', '=', ''),
            ])),
        ),
        eb.exists(
          eb.selectFrom('call_transcriptions as t').select('t.tid').whereRef('t.app_id', '=', 'calls.app_id').whereRef('t.session_id', '=', 'calls.session_id')
            .where((w) => w.or([w('t.transcript_url', 'is', null), w('t.transcript_url', '=', '')])),
        ),
        eb.and([
          eb('has_transcription', '=', 1),
          eb.not(eb.exists(eb.selectFrom('call_transcriptions as t').select('t.tid').whereRef('t.app_id', '=', 'calls.app_id').whereRef('t.session_id', '=', 'calls.session_id'))),
        ]),
      ]),
    )
    .execute();
  return rows.map((r) => r.session_id);
}
