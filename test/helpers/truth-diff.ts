import type { Kysely } from 'kysely';
import type { AppTruth, TruthCall } from '../../src/simulator/truth.js';
import type { CallParticipantsTable, CallRecordingsTable, CallRow, Database } from '../../src/store/schema.js';

const EPS = 1e-9;

function near(a: number | null | undefined, b: number | null | undefined): boolean {
  if (a == null || b == null) return a == b;
  return Math.abs(a - b) < EPS;
}

/**
 * Differences between what the database holds for one app and the simulator's ground truth, as
 * readable lines (empty when equal). Checks: no lost call, no extra call, every stored field,
 * participants per device and recordings; not-found calls flagged; malformed calls rejected.
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
  return out;
}
