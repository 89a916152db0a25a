import type { QueryResult } from 'kysely';
import { refreshCallFigures } from './call-figures-repo.js';
import { compiledOnce, insertRows, MAX_IDS, placeholderRow, run, statementSizes, type Db } from './compiled-statements.js';
import type { CallParticipantRowsTable, CallPayloadRowsTable, CallRows, NewCallRow, NewParticipantRow, NewRecordingRow, NewTranscriptionRow } from './schema.js';

/**
 * Rows per statement, at most. The bound parameters stay far below SQLite's 32,766 (and
 * PostgreSQL's 65,535): 512 calls × 34 columns = 17,408.
 */
const MAX_CALL_ROWS = 512;
const MAX_CHILD_ROWS = 1024;

/** Column lists in statement order; the checks below fail to compile when a table gains a column they lack. */
const CALL_COLUMNS = [
  'app_id', 'region', 'session_id', 'type', 'mode', 'receiver_type', 'receiver', 'initiator', 'status', 'is_final',
  'total_audio_minutes', 'total_video_minutes', 'total_duration_minutes', 'total_duration',
  'total_duration_seconds', 'total_participants', 'has_recording', 'initiated_at', 'started_at',
  'ended_at', 'details_source', 'list_fingerprint', 'not_found_at', 'first_synced_at', 'synced_at',
  'participant_rows', 'joined_devices', 'joined_users', 'participant_audio_minutes', 'participant_video_minutes',
  'participant_total_minutes', 'participant_outside_rows', 'recording_minutes',
  'detail_error', 'has_transcription', 'metadata_json', 'tags_json', 'stale_at',
  'participant_missing_uid_rows', 'participant_negative_rows', 'participant_max_minutes', 'recording_rows',
  'started_day', 'started_month', 'participant_span_minutes',
] as const satisfies readonly (keyof NewCallRow)[];

const PAYLOAD_COLUMNS = ['call_id', 'raw_json'] as const satisfies readonly (keyof CallPayloadRowsTable)[];

/** As stored (call_participant_rows, 20261126T100000): the call's call_id instead of its text key. */
const PARTICIPANT_COLUMNS = [
  'call_id', 'seq', 'uid', 'device_id', 'total_audio_minutes', 'total_video_minutes',
  'total_duration_minutes', 'is_joined', 'joined_at', 'left_at', 'state',
] as const satisfies readonly (keyof CallParticipantRowsTable)[];

const RECORDING_COLUMNS = [
  'app_id', 'session_id', 'rid', 'duration_minutes', 'start_time', 'end_time', 'recording_url',
] as const satisfies readonly (keyof NewRecordingRow)[];

const TRANSCRIPTION_COLUMNS = [
  'app_id', 'session_id', 'tid', 'mid', 'room_name', 'start_time', 'end_time', 'transcript_date', 'transcript_url',
] as const satisfies readonly (keyof NewTranscriptionRow)[];

type Lacks<Row, Columns extends readonly PropertyKey[]> = Exclude<keyof Row, Columns[number]>;
const everyColumn: [
  Lacks<Omit<NewCallRow, 'call_id'>, typeof CALL_COLUMNS>, Lacks<CallPayloadRowsTable, typeof PAYLOAD_COLUMNS>, Lacks<CallParticipantRowsTable, typeof PARTICIPANT_COLUMNS>,
  Lacks<NewRecordingRow, typeof RECORDING_COLUMNS>, Lacks<NewTranscriptionRow, typeof TRANSCRIPTION_COLUMNS>,
] extends [never, never, never, never, never] ? true : never = true;
void everyColumn;

/** Every column but the key and first_synced_at is replaced when a stored call is written again. */
const CALL_UPDATE_COLUMNS = CALL_COLUMNS.filter((c) => c !== 'app_id' && c !== 'session_id' && c !== 'first_synced_at');

export interface StoredCallState {
  listFingerprint: string | null;
  isFinal: boolean;
  notFound: boolean;
}

/** What is stored of these calls, to decide which list entries changed. */
export async function loadCallStates(db: Db, appId: string, sessionIds: readonly string[]): Promise<Map<string, StoredCallState>> {
  const out = new Map<string, StoredCallState>();
  let at = 0;
  for (const n of statementSizes(sessionIds.length, MAX_IDS)) {
    const q = compiledOnce(db, `select-states:${n}`, n + 1, () =>
      db
        .selectFrom('calls')
        .select(['session_id', 'list_fingerprint', 'is_final', 'not_found_at'])
        .where('app_id', '=', '')
        .where('session_id', 'in', new Array<string>(n).fill(''))
        .compile(),
    );
    const params: unknown[] = [appId];
    for (let i = at; i < at + n; i++) params.push(sessionIds[i]);
    at += n;
    const res = (await run(db, q, params)) as QueryResult<{ session_id: string; list_fingerprint: string | null; is_final: number; not_found_at: number | null }>;
    for (const r of res.rows) out.set(r.session_id, { listFingerprint: r.list_fingerprint, isFinal: r.is_final === 1, notFound: r.not_found_at !== null });
  }
  return out;
}

/** Whether any call of the app is stored (a first sync then has nothing to compare list entries with). */
export async function hasStoredCalls(db: Db, appId: string): Promise<boolean> {
  const row = await db.selectFrom('calls').select('session_id').where('app_id', '=', appId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Calls of an app and region stored in a live state (initiated/ongoing) that still exist and are not
 * stale (stuck live longer than liveMaxDays: those no longer cost a Get Call per run).
 */
export async function listLiveCalls(db: Db, appId: string, region: string): Promise<string[]> {
  const rows = await db
    .selectFrom('calls')
    .select('session_id')
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('is_final', '=', 0)
    .where('not_found_at', 'is', null)
    .where('stale_at', 'is', null)
    .execute();
  return rows.map((r) => r.session_id);
}

/** Marks live calls that started (or were initiated) before `before` as stale (their figures too); returns how many. */
export async function markStaleLiveCalls(db: Db, appId: string, region: string, before: number, now: number): Promise<number> {
  // The mark and the figures' refresh together or not at all (the caller may pass no transaction).
  const mark = async (trx: Db): Promise<number> => {
    const r = await trx
      .updateTable('calls')
      .set({ stale_at: now })
      .where('app_id', '=', appId)
      .where('region', '=', region)
      .where('is_final', '=', 0)
      .where('not_found_at', 'is', null)
      .where('stale_at', 'is', null)
      .where((eb) => eb(eb.fn.coalesce('started_at', 'initiated_at', 'first_synced_at'), '<', before))
      .returning('session_id')
      .execute();
    await refreshCallFigures(trx, appId, r.map((c) => c.session_id));
    return r.length;
  };
  return db.isTransaction ? mark(db) : db.transaction().execute(mark);
}

/**
 * Calls stored from their list entry: those that carry recordings or transcriptions (`media`), fetched
 * again once list entries are seen to leave media out, or all of them, once entries are seen to
 * state something other than Get Call (sync/list-audit.ts).
 */
export async function listCallsStoredFromList(db: Db, appId: string, region: string, which: 'media' | 'all'): Promise<string[]> {
  let q = db
    .selectFrom('calls')
    .select('session_id')
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('details_source', '=', 'list')
    .where('not_found_at', 'is', null);
  if (which === 'media') q = q.where((eb) => eb.or([eb('has_recording', '=', 1), eb('has_transcription', '=', 1)]));
  const rows = await q.execute();
  return rows.map((r) => r.session_id);
}

/**
 * Writes calls with their payloads, participants, recordings and transcriptions, replacing what was
 * stored for them. Call it inside the use case's transaction: the tables then change together or not
 * at all.
 * Statements are compiled once per shape (see `compiledOnce`); the SQL is the dialect's own.
 */
export async function upsertCalls(trx: Db, batch: readonly CallRows[]): Promise<void> {
  if (batch.length === 0) return;
  // Last write wins when a batch holds the same call twice (a call repeated across pages).
  const unique = new Map<string, CallRows>();
  for (const rows of batch) unique.set(rows.call.session_id, rows);
  const calls = [...unique.values()];
  const appId = calls[0]!.call.app_id;
  const callRows = calls.map((c) => c.call);

  // Each call's call_id, as the upsert returns it (new or already stored), for its payload and participant rows.
  const callIds = new Map<string, number>();
  await insertRows(
    trx, 'upsert-calls', callRows, CALL_COLUMNS, MAX_CALL_ROWS,
    (n) =>
      trx
        .insertInto('calls')
        .values(new Array<NewCallRow>(n).fill(placeholderRow(CALL_COLUMNS) as unknown as NewCallRow))
        .onConflict((oc) =>
          oc.columns(['app_id', 'session_id']).doUpdateSet((eb) => {
            const set: Record<string, unknown> = {};
            for (const col of CALL_UPDATE_COLUMNS) set[col] = eb.ref(`excluded.${col}`);
            return set as Partial<NewCallRow>;
          }),
        )
        .returning(['call_id', 'session_id'])
        .compile(),
    (res) => {
      for (const r of (res as QueryResult<{ call_id: number; session_id: string }>).rows) callIds.set(r.session_id, r.call_id);
    },
  );
  // The payload has a table of its own (scans of calls skip it), keyed by the call's call_id. A
  // call the upsert did not return would be a NULL key, which both databases refuse: the
  // transaction fails rather than store an orphan.
  const payloads = calls.map((c) => ({ call_id: callIds.get(c.payload.session_id) ?? null, raw_json: c.payload.raw_json }));
  await insertRows(trx, 'upsert-payloads', payloads, PAYLOAD_COLUMNS, MAX_CALL_ROWS, (n) =>
    trx
      .insertInto('call_payload_rows')
      .values(new Array<CallPayloadRowsTable>(n).fill({ call_id: 0, raw_json: '' }))
      .onConflict((oc) => oc.column('call_id').doUpdateSet((eb) => ({ raw_json: eb.ref('excluded.raw_json') })))
      .compile(),
  );
  // What reconcile and billing read of these calls, from the view, once for the whole batch.
  await refreshCallFigures(trx, appId, callRows.map((c) => c.session_id));

  let at = 0;
  for (const n of statementSizes(calls.length, MAX_IDS)) {
    const ids: unknown[] = [appId];
    const callIdsHere: unknown[] = [];
    for (let i = at; i < at + n; i++) {
      ids.push(callRows[i]!.session_id);
      callIdsHere.push(callIds.get(callRows[i]!.session_id) ?? null);
    }
    at += n;
    const placeholders = new Array<string>(n).fill('');
    const delParticipants = compiledOnce(trx, `delete-participants:${n}`, n, () =>
      trx.deleteFrom('call_participant_rows').where('call_id', 'in', new Array<number>(n).fill(0)).compile(),
    );
    const delRecordings = compiledOnce(trx, `delete-recordings:${n}`, n + 1, () =>
      trx.deleteFrom('call_recordings').where('app_id', '=', '').where('session_id', 'in', placeholders).compile(),
    );
    const delTranscriptions = compiledOnce(trx, `delete-transcriptions:${n}`, n + 1, () =>
      trx.deleteFrom('call_transcriptions').where('app_id', '=', '').where('session_id', 'in', placeholders).compile(),
    );
    await run(trx, delParticipants, callIdsHere);
    await run(trx, delRecordings, ids);
    await run(trx, delTranscriptions, ids);
  }

  const participants: CallParticipantRowsTable[] = [];
  const recordings: NewRecordingRow[] = [];
  const transcriptions: NewTranscriptionRow[] = [];
  for (const c of calls) {
    // A call the upsert did not return would be a NULL key, which both databases refuse: the
    // transaction fails rather than store an orphan.
    const callId = callIds.get(c.call.session_id) as number;
    for (const p of c.participants) participants.push(participantRow(callId, p));
    for (const r of c.recordings) recordings.push(r);
    for (const t of c.transcriptions) transcriptions.push(t);
  }
  await insertRows(trx, 'insert-participants', participants, PARTICIPANT_COLUMNS, MAX_CHILD_ROWS, (n) =>
    trx.insertInto('call_participant_rows').values(new Array<CallParticipantRowsTable>(n).fill(placeholderRow(PARTICIPANT_COLUMNS) as unknown as CallParticipantRowsTable)).compile(),
  );
  await insertRows(trx, 'insert-recordings', recordings, RECORDING_COLUMNS, MAX_CHILD_ROWS, (n) =>
    trx.insertInto('call_recordings').values(new Array<NewRecordingRow>(n).fill(placeholderRow(RECORDING_COLUMNS) as unknown as NewRecordingRow)).compile(),
  );
  await insertRows(trx, 'insert-transcriptions', transcriptions, TRANSCRIPTION_COLUMNS, MAX_CHILD_ROWS, (n) =>
    trx.insertInto('call_transcriptions').values(new Array<NewTranscriptionRow>(n).fill(placeholderRow(TRANSCRIPTION_COLUMNS) as unknown as NewTranscriptionRow)).compile(),
  );
}

/** A participant as stored: under its call's call_id, without the call's text key. */
function participantRow(callId: number, p: NewParticipantRow): CallParticipantRowsTable {
  return {
    call_id: callId, seq: p.seq, uid: p.uid, device_id: p.device_id, total_audio_minutes: p.total_audio_minutes ?? null,
    total_video_minutes: p.total_video_minutes ?? null, total_duration_minutes: p.total_duration_minutes ?? null, is_joined: p.is_joined,
    joined_at: p.joined_at ?? null, left_at: p.left_at ?? null, state: p.state ?? null,
  };
}

/**
 * Marks calls that Get Call says no longer exist (their figures too); rows that are not stored yet
 * are left to the caller. `unlisted`: the calls a complete listing no longer shows; their list
 * fingerprint goes too, so an entry listed again later is taken as changed and stored again, unmarked.
 */
export async function markNotFound(trx: Db, appId: string, sessionIds: readonly string[], now: number, unlisted = false): Promise<void> {
  for (let i = 0; i < sessionIds.length; i += MAX_IDS) {
    const part = sessionIds.slice(i, i + MAX_IDS);
    await trx.updateTable('calls').set({ not_found_at: now, synced_at: now, ...(unlisted ? { list_fingerprint: null } : {}) }).where('app_id', '=', appId).where('session_id', 'in', part).execute();
    await refreshCallFigures(trx, appId, part);
  }
}

/** Calls of an app and region the service still has as far as we know (not marked not found). */
export async function countStoredCalls(db: Db, appId: string, region: string): Promise<number> {
  const r = await db
    .selectFrom('calls')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('not_found_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * List entries filed in rejected_records under a key that has no stored call: listed, but not in
 * `calls`. Only those filed for this region: counted for the appId in every region, one region's
 * unreadable entry stood in for another region's call missing from a window (ok).
 */
export async function countRejectedListedOnly(db: Db, appId: string, region: string): Promise<number> {
  const rejected = (endpoints: string[]) =>
    db
      .selectFrom('rejected_records as r')
      .where('r.app_id', '=', appId)
      .where('r.endpoint', 'in', endpoints)
      .where('r.region', '=', region)
      // Entries a complete listing no longer showed are no longer calls the service holds (markRejectsUnlisted).
      .where('r.unlisted_at', 'is', null);
  const keyed = await rejected(['list_calls', 'get_call'])
    .select((eb) => eb.fn.count<number | string | bigint>('r.record_key').distinct().as('n'))
    .where('r.record_key', 'not like', `${POSITION_KEY_PREFIX}%`)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('calls as c').select('c.session_id').where('c.app_id', '=', appId).whereRef('c.session_id', '=', 'r.record_key'))))
    .executeTakeFirstOrThrow();
  // An entry without a sessionId is keyed by its page and position, which change as calls arrive:
  // counted by key, one bad entry counted once more every run, until the count covered a call the
  // listing had missed (found by a hostile fake). Counted by payload, it is one entry.
  const positioned = await rejected(['list_calls'])
    .select((eb) => eb.fn.count<number | string | bigint>('r.fingerprint').distinct().as('n'))
    .where('r.record_key', 'like', `${POSITION_KEY_PREFIX}%`)
    .executeTakeFirstOrThrow();
  return Number(keyed.n) + Number(positioned.n);
}

/** How a list entry without a sessionId is keyed in rejected_records (sync/page-planner.ts). */
export const POSITION_KEY_PREFIX = 'list:page';

/** Stored final calls of an app and region not marked not found, `limit` at a time from after `afterCallId`, in call_id order. */
export async function storedFinalCallIdsAfter(db: Db, appId: string, region: string, afterCallId: number, limit: number): Promise<{ call_id: number; session_id: string }[]> {
  return db
    .selectFrom('calls')
    .select(['call_id', 'session_id'])
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('is_final', '=', 1)
    .where('not_found_at', 'is', null)
    .where('call_id', '>', afterCallId)
    .orderBy('call_id')
    .limit(limit)
    .execute();
}

/** Stored calls (not marked not found) whose time (startedAt, else initiatedAt, else endedAt) is at or after `from`. */
export async function storedCallIdsSince(db: Db, appId: string, region: string, from: number): Promise<string[]> {
  const rows = await db
    .selectFrom('calls')
    .select('session_id')
    .where('app_id', '=', appId)
    .where('region', '=', region)
    .where('not_found_at', 'is', null)
    .where((eb) => eb(eb.fn.coalesce('started_at', 'initiated_at', 'ended_at'), '>=', from))
    .execute();
  return rows.map((r) => r.session_id);
}
