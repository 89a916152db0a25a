import { Agent } from 'undici';
import type { Clock } from '../../../src/config/clock.js';
import { systemClock } from '../../../src/config/clock.js';
import type { Settings } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/log/logger.js';
import { runSync, type RunSummary } from '../../../src/sync/run-sync.js';
import type { SyncOptions } from '../../../src/sync/sync-app.js';
import { openStore } from '../../../src/store/connection.js';
import { withStore } from '../../helpers/harness.js';
import type { FakeCall, FakeCallsService, FakeOptions, FakeParticipant } from './fake-calls-service.js';

export const DAY = 86_400;

/** The wall clock moved `offsetMs` ahead: a night `k` days from now, everything else real. */
export function shiftedClock(offsetMs: number): Clock {
  return { ...systemClock, now: () => Date.now() + offsetMs };
}

/** syncWith (test/helpers/harness.ts) on a clock of its own. */
export async function syncOn(settings: Settings, clock: Clock, opts: Omit<SyncOptions, 'runId'> = {}): Promise<RunSummary> {
  const store = await openStore(settings.database);
  const dispatcher = new Agent({ connections: settings.concurrency + 2, keepAliveTimeout: 5_000 });
  try {
    return await runSync({ db: store.db, dispatcher, clock, log: silentLogger }, settings, opts);
  } finally {
    await dispatcher.close();
    await store.close();
  }
}

type Pick<T> = readonly T[];
const pick = <T>(rand: () => number, list: Pick<T>): T => list[Math.floor(rand() * list.length)]!;

/** A combination of List Calls / Get Call behaviours the docs allow, drawn from a seed. */
export function drawService(rand: () => number, seed: number): { opts: FakeOptions; pageSize: number; label: string } {
  const opts: FakeOptions = { seed, calls: 40 + Math.floor(rand() * 120), ongoing: Math.floor(rand() * 3), spanHours: pick(rand, [24, 96, 240]), groups: 2 + Math.floor(rand() * 3) };
  const pageSize = pick(rand, [25, 50, 100]);
  const set = <K extends keyof FakeOptions>(k: K, chance: number, values: Pick<NonNullable<FakeOptions[K]>>): void => {
    if (rand() < chance) opts[k] = pick(rand, values);
  };
  set('pageBase', 0.5, [0, 1]);
  set('cap', 0.25, [10, 20, 30]);
  set('perPage', 0.3, ['requested', 'absent']);
  set('total', 0.35, ['absent', 'page', 'jitter']);
  set('totalPages', 0.3, ['absent', 'requested']);
  set('currentPage', 0.25, ['absent', 'one', 'plusOne']);
  set('meta', 0.2, ['none', 'top-camel']);
  set('order', 0.5, ['oldest', 'random', 'startedNullsLast']);
  // No order and no total is partial on every run (documented): rarely drawn, it would waste nights.
  if (opts.order === 'random' && opts.total !== undefined && opts.total !== 'jitter' && rand() < 0.75) delete opts.order;
  set('unstarted', 0.5, ['zero', 'negative', 'null']);
  set('pastEnd', 0.3, ['last', 'invalid']);
  if (rand() < 0.2) opts.tiedBlock = { at: Math.floor(rand() * 30), size: 2 + Math.floor(rand() * 6), ties: pick(rand, ['alternate', 'random'] as const) };
  if (rand() < 0.3) opts.listMinimal = true;
  if (rand() < 0.25) opts.lateMinutes = pick(rand, [3, 5]);
  if (rand() < 0.2) opts.lateParticipants = pick(rand, [4, 7]);
  if (rand() < 0.3) opts.recordings = { every: pick(rand, [3, 5]), listed: pick(rand, ['all', 'first'] as const) };
  if (rand() < 0.2) opts.getOmits = [pick(rand, ['participants', 'recordings', 'hasRecording', 'totalAudioMinutes', 'mode'])];
  // A Get Call behind the listing answers so for the newest calls; under a shuffled order "newest" is any call.
  if (rand() < 0.2 && opts.order !== 'random') opts.notFoundFirst = pick(rand, [1, 3]);
  if (rand() < 0.1) opts.unreadableInList = pick(rand, [17, 29]);
  if (rand() < 0.3) opts.members = pick(rand, [{ cap: 10 }, { cap: 15, total: 'omit' }, { total: 0 }, { pageBase: 0 }, { cap: 20, total: 'page' }, { perPage: 'requested', cap: 25 }] as const);
  const shown = Object.entries(opts).filter(([k]) => !['seed', 'calls', 'ongoing', 'spanHours', 'groups'].includes(k));
  return { opts, pageSize, label: `pageSize ${pageSize} ${JSON.stringify(Object.fromEntries(shown))}` };
}

/** Adds up a call's totals again after its participants changed (FakeCallsService.settle does it at the end). */
function retotal(c: FakeCall): void {
  const sum = (k: 'totalAudioMinutes' | 'totalVideoMinutes'): number => c.participants.reduce((s, p) => s + p[k], 0);
  Object.assign(c, { totalAudioMinutes: sum('totalAudioMinutes'), totalVideoMinutes: sum('totalVideoMinutes'), totalDurationInMinutes: sum('totalAudioMinutes') + sum('totalVideoMinutes'), totalParticipants: c.participants.length });
}

/** What happened at the service between two nights (for the judge). */
export interface Day {
  /** Calls changed after they ended (minutes, a late participant, a recording added or removed). */
  touched: Set<string>;
  /** Calls added with times well behind the watermark (backdated: indexed late). */
  backdated: Set<string>;
  removed: Set<string>;
}

/**
 * One day at the service, ending at `now` (unix seconds) after the night before at `prev`: new
 * calls (some still live), live calls ending, calls removed, final calls changed after they ended
 * (recent and old), recordings added and removed, members joining and leaving.
 */
export function liveOneDay(service: FakeCallsService, rand: () => number, prev: number, now: number, day: Day): void {
  for (const c of service.calls) {
    if (c.status === 'ongoing' && rand() < 0.8) {
      c.status = 'ended';
      service.settle(c, Math.min(now - 120, c.startedAt! + 60 + Math.floor(rand() * 3000)));
    }
  }
  for (let n = 3 + Math.floor(rand() * 12); n > 0; n--) service.addCall({ at: prev + 60 + Math.floor(rand() * (now - prev - 1200)) });
  for (let n = Math.floor(rand() * 2); n > 0; n--) service.addCall({ at: now - 200 - Math.floor(rand() * 600), status: 'ongoing' });
  if (rand() < 0.25) day.backdated.add(service.addCall({ at: now - Math.floor((2 + rand() * 8) * DAY), status: 'ended' }).sessionId);
  // A call of every group, so each group's members are read tonight.
  for (const g of service.members.keys()) if (rand() < 0.7) Object.assign(service.addCall({ at: now - 900 - Math.floor(rand() * 3000), status: 'ended' }), { receiverType: 'group', mode: 'meet', receiver: g });
  for (let n = Math.floor(rand() * 3); n > 0; n--) {
    const victim = pick(rand, service.calls);
    service.calls.splice(service.calls.indexOf(victim), 1);
    day.removed.add(victim.sessionId);
  }
  const ended = service.calls.filter((c) => c.status === 'ended' && c.startedAt !== undefined && c.endedAt !== undefined && c.endedAt < now - 600);
  for (let n = Math.floor(rand() * 4); n > 0 && ended.length > 0; n--) {
    const recent = ended.filter((c) => c.endedAt! > now - 3 * DAY);
    const c = rand() < 0.6 && recent.length > 0 ? pick(rand, recent) : pick(rand, ended);
    const what = rand();
    const joined = c.participants.filter((p) => p.isJoined);
    if (what < 0.35 && joined.length > 0) {
      const p = pick(rand, joined);
      const more = 0.5 + Math.floor(rand() * 10) / 2;
      p.totalDuration += more;
      if (c.type === 'video') p.totalVideoMinutes += more;
      else p.totalAudioMinutes += more;
    } else if (what < 0.55) {
      const joinedAt = c.startedAt! + 5;
      const leftAt = Math.max(joinedAt + 30, c.endedAt! - 2);
      const m = (leftAt - joinedAt) / 60;
      const late: FakeParticipant = { uid: `late-${c.sessionId.slice(-6)}-${c.participants.length}`, deviceId: `dev-late-${c.participants.length}`, isJoined: true, joinedAt, leftAt, state: 'ended', totalDuration: m, totalAudioMinutes: c.type === 'audio' ? m : 0, totalVideoMinutes: c.type === 'video' ? m : 0 };
      c.participants.push(late);
    } else if (what < 0.8 && !c.hasRecording) {
      c.hasRecording = true;
      c.recordings = [{ rid: `${c.sessionId}-late`, recording_url: `https://rec.invalid/${c.sessionId}/late.mp4`, startTime: c.startedAt, endTime: c.endedAt, duration: (c.endedAt! - c.startedAt!) / 60 }];
    } else if (c.hasRecording) {
      c.hasRecording = false;
      delete c.recordings;
    } else continue;
    retotal(c);
    day.touched.add(c.sessionId);
  }
  for (const [guid, uids] of service.members) {
    for (let k = Math.floor(rand() * 3); k > 0 && uids.length > 0; k--) uids.splice(Math.floor(rand() * uids.length), 1);
    for (let k = Math.floor(rand() * 3); k > 0; k--) uids.push(`${guid}-d${now}-${k}`);
  }
}

export interface Stored {
  calls: Map<string, { status: string | null; not_found_at: number | null; started_at: number | null; initiated_at: number | null }>;
  diffs: Map<string, string[]>;
  groups: { guid: string; status: string; synced_at: number; members: string[] }[];
}

const near = (a: number | null | undefined, b: unknown): boolean => a != null && typeof b === 'number' && Math.abs(a - b) < 1e-9;

/** The database against the service's calls, call by call (as callsVsTruth), and the groups' members. */
export async function stored(service: FakeCallsService, database: string): Promise<Stored> {
  return withStore(database, async ({ db }) => {
    const rows = await db.selectFrom('calls').selectAll().execute();
    const calls = new Map(rows.map((c) => [c.session_id, c]));
    const parts = await db.selectFrom('call_participants').select(['session_id', 'uid', 'device_id', 'total_duration_minutes']).execute();
    const recs = await db.selectFrom('call_recordings').select(['session_id']).execute();
    const diffs = new Map<string, string[]>();
    for (const f of service.calls) {
      const c = calls.get(f.sessionId);
      const out: string[] = [];
      if (!c) out.push('not stored');
      else {
        const same: [string, unknown, unknown][] = [
          ['type', c.type, f.type], ['mode', c.mode, f.mode], ['receiver', c.receiver, f.receiver], ['initiator', c.initiator, f.initiator],
          ['status', c.status, f.status], ['started_at', c.started_at, f.startedAt], ['ended_at', c.ended_at, f.endedAt], ['has_recording', c.has_recording, f.hasRecording ? 1 : 0],
        ];
        for (const [k, got, want] of same) if ((got ?? null) !== (want ?? null)) out.push(`${k} ${String(got)}, truth ${String(want)}`);
        // A call that never started has no minutes: NULL (none stated: listMinimal beside a Get view without them) is its 0.
        const minutes = (got: number | null, want: unknown): boolean => near(got, want) || (f.startedAt === undefined && got === null && want === 0);
        if (!minutes(c.total_audio_minutes, f.totalAudioMinutes) || !minutes(c.total_video_minutes, f.totalVideoMinutes)) out.push(`call minutes ${c.total_audio_minutes}/${c.total_video_minutes}, truth ${String(f.totalAudioMinutes)}/${String(f.totalVideoMinutes)}`);
        const p = (uid: string, device: string, minutes: number | null): string => `${uid}/${device}/${minutes?.toFixed(6)}`;
        const have = parts.filter((x) => x.session_id === f.sessionId).map((x) => p(x.uid, x.device_id, x.total_duration_minutes)).sort();
        const want = f.participants.map((x) => p(x.uid, x.deviceId ?? '', x.totalDuration)).sort();
        if (have.join() !== want.join()) out.push(`participants ${have.join()} | truth ${want.join()}`);
        const nr = recs.filter((r) => r.session_id === f.sessionId).length;
        const fr = Array.isArray(f.recordings) ? f.recordings.length : 0;
        if (nr !== fr) out.push(`${nr} recording(s), truth ${fr}`);
        if (c.not_found_at !== null) out.push(`not_found_at set, but the service holds it`);
      }
      if (out.length > 0) diffs.set(f.sessionId, out);
    }
    const members = await db.selectFrom('group_members').select(['guid', 'uid']).execute();
    const groups = (await db.selectFrom('synced_groups').select(['guid', 'status', 'synced_at']).execute()).map((g) => ({ guid: g.guid, status: g.status, synced_at: Number(g.synced_at), members: members.filter((m) => m.guid === g.guid).map((m) => m.uid).sort() }));
    return { calls: new Map(rows.map((c) => [c.session_id, { status: c.status, not_found_at: c.not_found_at, started_at: c.started_at, initiated_at: c.initiated_at }])), diffs, groups };
  });
}
