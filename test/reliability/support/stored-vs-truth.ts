import { withStore } from '../../helpers/harness.js';
import type { FakeCallsService } from './fake-calls-service.js';

const near = (a: number | null | undefined, b: unknown): boolean => a != null && typeof b === 'number' && Math.abs(a - b) < 1e-9;

/**
 * Every way the calls stored in `database` differ from the fake's truth: kind, parties, status,
 * start, recording flag, call minutes, each participant (user, device, minutes), and how many
 * recordings and transcriptions. `invitees: false` leaves out participants who never joined (a
 * service whose Get Call shows only those who joined).
 */
export async function callsVsTruth(service: FakeCallsService, database: string, o: { invitees?: boolean } = {}): Promise<string[]> {
  return withStore(database, async ({ db }) => {
    const calls = new Map((await db.selectFrom('calls').selectAll().execute()).map((c) => [c.session_id, c]));
    const parts = await db.selectFrom('call_participants').select(['session_id', 'uid', 'device_id', 'total_duration_minutes']).execute();
    const recs = await db.selectFrom('call_recordings').select(['session_id']).execute();
    const trs = await db.selectFrom('call_transcriptions').select(['session_id']).execute();
    const out: string[] = [];
    for (const f of service.calls) {
      const c = calls.get(f.sessionId);
      if (!c) {
        out.push(`${f.sessionId}: not stored`);
        continue;
      }
      const same: [string, unknown, unknown][] = [
        ['type', c.type, f.type], ['mode', c.mode, f.mode], ['receiver_type', c.receiver_type, f.receiverType], ['receiver', c.receiver, f.receiver],
        ['initiator', c.initiator, f.initiator], ['status', c.status, f.status], ['started_at', c.started_at, f.startedAt], ['has_recording', c.has_recording, f.hasRecording ? 1 : 0],
      ];
      for (const [k, got, want] of same) if ((got ?? null) !== (want ?? null)) out.push(`${f.sessionId}: ${k} ${String(got)}, truth ${String(want)}`);
      if (!near(c.total_audio_minutes, f.totalAudioMinutes) || !near(c.total_video_minutes, f.totalVideoMinutes)) {
        out.push(`${f.sessionId}: call minutes ${c.total_audio_minutes}/${c.total_video_minutes}, truth ${String(f.totalAudioMinutes)}/${String(f.totalVideoMinutes)}`);
      }
      const p = (uid: string, device: string, minutes: number | null): string => `${uid}/${device}/${minutes?.toFixed(9)}`;
      const stored = parts.filter((x) => x.session_id === f.sessionId).map((x) => p(x.uid, x.device_id, x.total_duration_minutes)).sort();
      const truth = f.participants.filter((x) => o.invitees !== false || x.isJoined).map((x) => p(x.uid, x.deviceId ?? '', x.totalDuration)).sort();
      if (stored.join() !== truth.join()) out.push(`${f.sessionId}: participants ${stored.join()} | truth ${truth.join()}`);
      const n = (list: { session_id: string }[]): number => list.filter((r) => r.session_id === f.sessionId).length;
      const fr = Array.isArray(f.recordings) ? f.recordings.length : 0;
      const ft = Array.isArray(f.transcriptions) ? f.transcriptions.length : 0;
      if (n(recs) !== fr || n(trs) !== ft) out.push(`${f.sessionId}: ${n(recs)} recording(s), ${n(trs)} transcription(s), truth ${fr}, ${ft}`);
    }
    return out;
  });
}
