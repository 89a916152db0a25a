import type { Kysely, Transaction } from 'kysely';
import type { CallRows } from '../transform/call-rows.js';
import type { Database, NewCallRow, NewParticipantRow, NewRecordingRow } from './schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** SQLite allows 32,766 bound parameters per statement; stay well below it. */
const MAX_PARAMS = 30_000;
const ID_CHUNK = 500;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function rowsPerStatement(sample: object | undefined): number {
  return sample ? Math.max(1, Math.floor(MAX_PARAMS / Object.keys(sample).length)) : 1;
}

export interface StoredCallState {
  listFingerprint: string | null;
  isFinal: boolean;
  notFound: boolean;
}

/** What is stored of these calls, to decide which list entries changed. */
export async function loadCallStates(db: Db, appId: string, sessionIds: readonly string[]): Promise<Map<string, StoredCallState>> {
  const out = new Map<string, StoredCallState>();
  for (const ids of chunks(sessionIds, ID_CHUNK)) {
    const rows = await db
      .selectFrom('calls')
      .select(['session_id', 'list_fingerprint', 'is_final', 'not_found_at'])
      .where('app_id', '=', appId)
      .where('session_id', 'in', ids)
      .execute();
    for (const r of rows) out.set(r.session_id, { listFingerprint: r.list_fingerprint, isFinal: r.is_final === 1, notFound: r.not_found_at !== null });
  }
  return out;
}

/** Calls of an app stored in a live state (initiated/ongoing) that still exist. */
export async function listLiveCalls(db: Db, appId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('calls')
    .select('session_id')
    .where('app_id', '=', appId)
    .where('is_final', '=', 0)
    .where('not_found_at', 'is', null)
    .execute();
  return rows.map((r) => r.session_id);
}

const CALL_UPDATE_COLUMNS = [
  'region', 'type', 'mode', 'receiver_type', 'receiver', 'initiator', 'status', 'is_final',
  'total_audio_minutes', 'total_video_minutes', 'total_duration_minutes', 'total_duration',
  'total_duration_seconds', 'total_participants', 'has_recording', 'initiated_at', 'started_at',
  'ended_at', 'details_source', 'list_fingerprint', 'raw_json', 'not_found_at', 'synced_at',
  'participant_rows', 'joined_devices', 'joined_users', 'participant_audio_minutes', 'participant_video_minutes',
  'participant_total_minutes', 'participant_outside_rows', 'recording_minutes',
] as const satisfies readonly (keyof NewCallRow)[];

/**
 * Writes calls with their participants and recordings, replacing what was stored for them. Call it
 * inside the use case's transaction: the three tables then change together or not at all.
 */
export async function upsertCalls(trx: Db, batch: readonly CallRows[]): Promise<void> {
  if (batch.length === 0) return;
  // Last write wins when a batch holds the same call twice (a call repeated across pages).
  const unique = new Map<string, CallRows>();
  for (const rows of batch) unique.set(rows.call.session_id, rows);
  const calls = [...unique.values()];
  const appId = calls[0]!.call.app_id;
  const callRows = calls.map((c) => c.call);
  for (const part of chunks(callRows, rowsPerStatement(callRows[0]))) {
    await trx
      .insertInto('calls')
      .values(part)
      .onConflict((oc) =>
        oc.columns(['app_id', 'session_id']).doUpdateSet((eb) => {
          const set: Record<string, unknown> = {};
          for (const col of CALL_UPDATE_COLUMNS) set[col] = eb.ref(`excluded.${col}`);
          return set as Partial<NewCallRow>;
        }),
      )
      .execute();
  }
  const ids = callRows.map((c) => c.session_id);
  for (const part of chunks(ids, ID_CHUNK)) {
    await trx.deleteFrom('call_participants').where('app_id', '=', appId).where('session_id', 'in', part).execute();
    await trx.deleteFrom('call_recordings').where('app_id', '=', appId).where('session_id', 'in', part).execute();
  }
  const participants: NewParticipantRow[] = calls.flatMap((c) => c.participants);
  for (const part of chunks(participants, rowsPerStatement(participants[0]))) {
    await trx.insertInto('call_participants').values(part).execute();
  }
  const recordings: NewRecordingRow[] = calls.flatMap((c) => c.recordings);
  for (const part of chunks(recordings, rowsPerStatement(recordings[0]))) {
    await trx.insertInto('call_recordings').values(part).execute();
  }
}

/** Marks calls that Get Call says no longer exist; rows that are not stored yet are left to the caller. */
export async function markNotFound(trx: Db, appId: string, sessionIds: readonly string[], now: number): Promise<void> {
  for (const part of chunks(sessionIds, ID_CHUNK)) {
    await trx.updateTable('calls').set({ not_found_at: now, synced_at: now }).where('app_id', '=', appId).where('session_id', 'in', part).execute();
  }
}
