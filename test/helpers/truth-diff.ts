import { isDeepStrictEqual } from 'node:util';
import { sql, type Kysely } from 'kysely';
import type { AppTruth, TruthCall, TruthJson, TruthTranscription } from '../../src/simulator/truth.js';
import type { CallParticipantsTable, CallRecordingsTable, CallRow, Database } from '../../src/store/schema.js';

const EPS = 1e-9;

function near(a: number | null | undefined, b: number | null | undefined): boolean {
  if (a == null || b == null) return a == b;
  return Math.abs(a - b) < EPS;
}

/** Columns of issue 12, read by name so this helper does not depend on when the schema type gains them. */
interface DetailColumns {
  has_transcription?: number | string | null;
  metadata_json?: string | null;
  tags_json?: string | null;
}

interface TranscriptionRow {
  session_id: string;
  tid: string;
  mid: string | null;
  room_name: string | null;
  start_time: number | string | null;
  end_time: number | string | null;
  transcript_date: number | string | null;
  transcript_url: string | null;
}

/**
 * Differences between what the database holds for one app and the simulator's ground truth, as
 * readable lines (empty when equal). Checks: no lost call, no extra call, every stored field,
 * participants per device and recordings; not-found calls flagged; malformed calls rejected. When
 * the truth carries them (the transcriptions detail quirk): has_transcription, metadata_json,
 * tags_json and the call_transcriptions rows. type/status NULL and uid '' compare like any value.
 */
export async function diffAgainstTruth(db: Kysely<Database>, truth: AppTruth, opts: { allowExtra?: ReadonlySet<string> } = {}): Promise<string[]> {
  const out: string[] = [];
  const app = truth.appId;
  const calls = await db.selectFrom('calls').selectAll().where('app_id', '=', app).execute();
  const parts = await db.selectFrom('call_participants').selectAll().where('app_id', '=', app).orderBy('session_id').orderBy('seq').execute();
  const recs = await db.selectFrom('call_recordings').selectAll().where('app_id', '=', app).execute();
  const byId = new Map(calls.map((c) => [c.session_id, c]));
  const partsBy = new Map<string, typeof parts>();
  for (const p of parts) (partsBy.get(p.session_id) ?? partsBy.set(p.session_id, []).get(p.session_id)!).push(p);
  const recsBy = new Map<string, typeof recs>();
  for (const r of recs) (recsBy.get(r.session_id) ?? recsBy.set(r.session_id, []).get(r.session_id)!).push(r);

  for (const [id, t] of truth.calls) {
    const c = byId.get(id);
    if (!c) {
      out.push(`missing call ${id}`);
      continue;
    }
    out.push(...diffCall(t, c, partsBy.get(id) ?? [], recsBy.get(id) ?? []));
    if (c.not_found_at !== null && !truth.notFound.has(id)) out.push(`${id}: not_found_at set but the call exists`);
  }
  const transcribed = [...truth.calls.values()].filter((t) => t.transcriptions !== undefined);
  if (transcribed.length > 0) out.push(...(await diffTranscriptions(db, app, transcribed)));
  for (const id of truth.notFound) {
    const c = byId.get(id);
    if (!c) out.push(`not-found call ${id} has no row`);
    else if (c.not_found_at === null) out.push(`not-found call ${id} lacks not_found_at`);
  }
  for (const c of calls) {
    if (!truth.calls.has(c.session_id) && !truth.notFound.has(c.session_id) && !opts.allowExtra?.has(c.session_id)) {
      out.push(`extra call ${c.session_id} (${c.status})`);
    }
  }
  if (truth.malformed.size) {
    const rej = await db.selectFrom('rejected_records').select('record_key').where('app_id', '=', app).execute();
    const keys = new Set(rej.map((r) => r.record_key));
    for (const id of truth.malformed) {
      if (!keys.has(id)) out.push(`malformed call ${id} not in rejected_records`);
      if (byId.has(id)) out.push(`malformed call ${id} was stored`);
    }
  }
  return out;
}

function diffCall(t: TruthCall, c: CallRow, parts: CallParticipantsTable[], recs: CallRecordingsTable[]): string[] {
  const out: string[] = [];
  const id = t.sessionId;
  const eq = (name: string, a: unknown, b: unknown): void => {
    if (a !== b) out.push(`${id}: ${name} is ${JSON.stringify(a)}, truth ${JSON.stringify(b)}`);
  };
  const num = (name: string, a: number | null, b: number | null): void => {
    if (!near(a, b)) out.push(`${id}: ${name} is ${a}, truth ${b}`);
  };
  eq('status', c.status, t.status);
  eq('type', c.type, t.type);
  eq('mode', c.mode, t.mode);
  eq('receiver_type', c.receiver_type, t.receiverType);
  eq('receiver', c.receiver, t.receiver);
  eq('initiator', c.initiator, t.initiator);
  num('total_audio_minutes', c.total_audio_minutes, t.totalAudioMinutes);
  num('total_video_minutes', c.total_video_minutes, t.totalVideoMinutes);
  num('total_duration_minutes', c.total_duration_minutes, t.totalDurationMinutes);
  eq('total_duration', c.total_duration, t.totalDuration);
  eq('total_participants', c.total_participants, t.totalParticipants);
  eq('has_recording', c.has_recording, t.hasRecording ? 1 : 0);
  eq('initiated_at', c.initiated_at, t.initiatedAt);
  eq('started_at', c.started_at, t.startedAt);
  eq('ended_at', c.ended_at, t.endedAt);
  const key = (p: { uid: string; device_id?: string; deviceId?: string; joined_at?: number | null; joinedAt?: number | null }): string =>
    `${p.uid}|${p.device_id ?? p.deviceId}|${p.joined_at ?? p.joinedAt ?? ''}`;
  const tp = [...t.participants].sort((a, b) => key(a).localeCompare(key(b)));
  const dp = [...parts].sort((a, b) => key(a).localeCompare(key(b)));
  if (tp.length !== dp.length) out.push(`${id}: ${dp.length} participant rows, truth ${tp.length}`);
  else
    tp.forEach((p, i) => {
      const d = dp[i]!;
      if (key(d) !== key(p)) out.push(`${id}: participant ${key(d)} vs truth ${key(p)}`);
      num(`participant ${p.uid} audio`, d.total_audio_minutes, p.audioMinutes);
      num(`participant ${p.uid} video`, d.total_video_minutes, p.videoMinutes);
      num(`participant ${p.uid} total`, d.total_duration_minutes, p.totalMinutes);
      eq(`participant ${p.uid} is_joined`, d.is_joined, p.isJoined ? 1 : 0);
      eq(`participant ${p.uid} left_at`, d.left_at, p.leftAt);
      eq(`participant ${p.uid} state`, d.state, p.state);
    });
  const tr = [...t.recordings].sort((a, b) => a.rid.localeCompare(b.rid));
  const dr = [...recs].sort((a, b) => a.rid.localeCompare(b.rid));
  if (tr.length !== dr.length) out.push(`${id}: ${dr.length} recordings, truth ${tr.length}`);
  else
    tr.forEach((r, i) => {
      const d = dr[i]!;
      eq('recording rid', d.rid, r.rid);
      num(`recording ${r.rid} duration`, d.duration_minutes, r.durationMinutes);
      eq(`recording ${r.rid} url`, d.recording_url, r.recordingUrl);
      eq(`recording ${r.rid} start`, d.start_time, r.startTime);
    });
  const x = c as unknown as DetailColumns;
  if (t.hasTranscription !== undefined) eq('has_transcription', x.has_transcription == null ? x.has_transcription : Number(x.has_transcription), t.hasTranscription ? 1 : 0);
  if (t.metaData !== undefined) out.push(...diffJson(id, 'metadata_json', x.metadata_json, t.metaData));
  if (t.tags !== undefined) out.push(...diffJson(id, 'tags_json', x.tags_json, t.tags));
  return out;
}

/** A JSON text column against the value received (null: the column must be NULL). */
function diffJson(id: string, name: string, stored: string | null | undefined, truth: TruthJson): string[] {
  if (stored === undefined) return [`${id}: ${name} column is missing`];
  if (stored === null) return truth === null ? [] : [`${id}: ${name} is NULL, truth ${JSON.stringify(truth)}`];
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return [`${id}: ${name} is not JSON: ${stored.slice(0, 80)}`];
  }
  return isDeepStrictEqual(value, truth) ? [] : [`${id}: ${name} is ${stored.slice(0, 120)}, truth ${JSON.stringify(truth).slice(0, 120)}`];
}

/** transcript_date as received (ISO text), or as the unix seconds it names. */
function sameDate(stored: number | string | null, iso: string): boolean {
  if (typeof stored === 'string' && stored === iso) return true;
  return stored !== null && Number(stored) === Date.parse(iso) / 1000;
}

async function diffTranscriptions(db: Kysely<Database>, app: string, calls: readonly TruthCall[]): Promise<string[]> {
  let rows: TranscriptionRow[];
  try {
    rows = (await sql<TranscriptionRow>`select * from call_transcriptions where app_id = ${app}`.execute(db)).rows;
  } catch (err) {
    return [`call_transcriptions cannot be read (${(err as Error).message.slice(0, 80)}), but the truth has transcriptions`];
  }
  const by = new Map<string, TranscriptionRow[]>();
  for (const r of rows) (by.get(r.session_id) ?? by.set(r.session_id, []).get(r.session_id)!).push(r);
  const out: string[] = [];
  const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
  for (const t of calls) {
    const want: TruthTranscription[] = t.transcriptions ?? [];
    const have = new Map((by.get(t.sessionId) ?? []).map((r) => [r.tid, r]));
    by.delete(t.sessionId);
    if (have.size !== want.length) out.push(`${t.sessionId}: ${have.size} transcriptions, truth ${want.length}`);
    for (const w of want) {
      const r = have.get(w.tid);
      if (!r) {
        out.push(`${t.sessionId}: transcription ${w.tid} missing`);
        continue;
      }
      const bad = [
        r.mid !== w.mid && 'mid',
        r.room_name !== w.roomName && 'room_name',
        num(r.start_time) !== w.startTime && 'start_time',
        num(r.end_time) !== w.endTime && 'end_time',
        !sameDate(r.transcript_date, w.transcriptDate) && 'transcript_date',
        r.transcript_url !== w.transcriptUrl && 'transcript_url',
      ].filter((f): f is string => typeof f === 'string');
      if (bad.length > 0) out.push(`${t.sessionId}: transcription ${w.tid} differs in ${bad.join(', ')}`);
    }
  }
  for (const [id, rs] of by) out.push(`${id}: ${rs.length} transcription rows for a call the truth has none for`);
  return out;
}
