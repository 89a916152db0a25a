import { nonFinalSnapshot } from './call-state.js';
import { formatTimer, withClassification } from './classify.js';
import type { DetailMark, LateForm } from './detail-picks.js';
import { makeRecordings } from './generate-call.js';
import { hash3, Rng, Salt } from './prng.js';
import type { TruthCall, TruthParticipant } from './truth.js';
import type { WireObject } from './wire-call.js';

/** Which answer a call is shaped for: the List entry, or what Get Call and the truth hold. */
export type DetailView = 'list' | 'service';
/** The two entries of a duplicated call: A at its place, B next to it. */
export type DuplicatePart = 'A' | 'B';

/** What implausibleMinutes puts on a call: 10,000 minutes for one participant, or call totals of 26 h. */
export const HUGE_PARTICIPANT_MINUTES = 10_000;
export const OVER_DAY_MINUTES = 26 * 60;

const MINUTE_KEYS = ['totalAudioMinutes', 'totalVideoMinutes', 'totalDuration', 'totalDurationInMinutes'] as const;
/** How a summary List entry leaves the minutes out. */
type SummaryForm = 'participants' | 'totals' | 'both';
const SUMMARY_FORMS: readonly SummaryForm[] = ['participants', 'totals', 'both'];

export interface ShapeEnv {
  seed: number;
  appId: string;
  now: number;
  settled: boolean;
  liveEnded: boolean;
}

function withParticipant(call: TruthCall, position: number, f: (p: TruthParticipant) => TruthParticipant): TruthCall {
  return { ...call, participants: call.participants.map((p, k) => (k === position ? f(p) : p)) };
}

function sums(ps: readonly TruthParticipant[]): { audio: number; video: number } {
  let audio = 0;
  let video = 0;
  for (const p of ps) {
    audio += p.audioMinutes;
    video += p.videoMinutes;
  }
  return { audio, video };
}

/** The settled call of a lateDetails mark: its recordings exist (made here when it had none). */
function settledLate(call: TruthCall, form: LateForm, env: ShapeEnv, index: number): TruthCall {
  if ((form !== 'recordings' && form !== 'both') || call.recordings.length > 0 || call.startedAt === null || call.endedAt === null) return call;
  const rng = new Rng(hash3(env.seed, index, Salt.lateDetails));
  return { ...call, hasRecording: true, recordings: makeRecordings(rng, call.sessionId, env.appId, call.startedAt, call.endedAt, false) };
}

/** Before its details settle: recordings announced but absent, minutes still 0, or no endedAt yet. */
function unsettledLate(call: TruthCall, form: LateForm): TruthCall {
  let c = call;
  if (form === 'recordings' || form === 'both') c = { ...c, hasRecording: true, recordings: [] };
  if (form === 'minutes' || form === 'both') {
    c = {
      ...c,
      totalAudioMinutes: 0,
      totalVideoMinutes: 0,
      totalDurationMinutes: 0,
      totalDuration: formatTimer(0),
      participants: c.participants.map((p) => ({ ...p, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0 })),
    };
  }
  if (form === 'ended-at') c = { ...c, endedAt: null };
  return withClassification(c);
}

/** The call (the truth, Get Call) or its List form under one detail mark. */
export function shapeCall(call: TruthCall, mark: DetailMark, view: DetailView, env: ShapeEnv, index: number): TruthCall {
  switch (mark.kind) {
    case 'late': {
      const settled = settledLate(call, mark.form, env, index);
      // The List entry never changes: it shows the unsettled call even once Get Call has the rest.
      return view === 'service' && env.settled ? settled : unsettledLate(settled, mark.form);
    }
    case 'uid':
      return withParticipant(call, mark.position, (p) => ({ ...p, uid: '' }));
    case 'no-type':
      return { ...call, type: null };
    case 'no-status':
      return withClassification({ ...call, status: null });
    case 'unknown-type':
      return { ...call, type: 'screenshare' };
    case 'negative':
      return withClassification(withParticipant(call, mark.position, (p) => ({ ...p, audioMinutes: -p.audioMinutes, videoMinutes: -p.videoMinutes, totalMinutes: -p.totalMinutes })));
    case 'huge': {
      const audioCall = call.type === 'audio';
      if (mark.overDay) {
        return withClassification({
          ...call,
          totalAudioMinutes: audioCall ? OVER_DAY_MINUTES : 0,
          totalVideoMinutes: audioCall ? 0 : OVER_DAY_MINUTES,
          totalDurationMinutes: OVER_DAY_MINUTES,
          totalDuration: formatTimer(OVER_DAY_MINUTES * 60),
        });
      }
      // Call totals follow the participant, so the sums agree and only plausibility is off.
      const c = withParticipant(call, mark.position, (p) => ({
        ...p,
        audioMinutes: audioCall ? HUGE_PARTICIPANT_MINUTES : 0,
        videoMinutes: audioCall ? 0 : HUGE_PARTICIPANT_MINUTES,
        totalMinutes: HUGE_PARTICIPANT_MINUTES,
      }));
      const s = sums(c.participants);
      return withClassification({ ...c, totalAudioMinutes: s.audio, totalVideoMinutes: s.video, totalDurationMinutes: s.audio + s.video, totalDuration: formatTimer((s.audio + s.video) * 60) });
    }
    case 'live-not-found':
      return env.liveEnded ? call : nonFinalSnapshot(call, 'ongoing', env.now);
    case 'stuck': {
      // Stuck calls must show an initiation time, however the call was generated.
      const initiatedAt = call.initiatedAt ?? (call.startedAt ?? env.now) - 5;
      return nonFinalSnapshot({ ...call, initiatedAt }, 'initiated', env.now);
    }
    default:
      return call;
  }
}

function leaveMinutesOut(w: WireObject, form: SummaryForm): void {
  if (form !== 'totals' && Array.isArray(w.participants)) {
    for (const p of w.participants as WireObject[]) for (const k of MINUTE_KEYS) delete p[k];
  }
  if (form !== 'participants') for (const k of MINUTE_KEYS) delete w[k];
}

/** A List entry without minutes, in one of the three forms (chosen per call). */
export function summaryEntry(w: WireObject, seed: number, index: number): void {
  leaveMinutesOut(w, SUMMARY_FORMS[hash3(seed, index, Salt.summaryForm) % SUMMARY_FORMS.length] ?? 'both');
}

/** The wire object of a marked call, changed in place: fields the truth has as null or '' are absent, entries cut. */
export function shapeWire(w: WireObject, mark: DetailMark, view: DetailView, part: DuplicatePart): void {
  const ps = Array.isArray(w.participants) ? (w.participants as WireObject[]) : null;
  switch (mark.kind) {
    case 'no-type':
      delete w.type;
      return;
    case 'no-status':
      delete w.status;
      return;
    case 'uid': {
      const p = ps?.[mark.position];
      if (p && mark.absent) delete p.uid;
      return;
    }
    case 'unusable':
      // The list entry must be incomplete, so that only Get Call could complete it.
      if (view === 'list') leaveMinutesOut(w, SUMMARY_FORMS[mark.ordinal % SUMMARY_FORMS.length] ?? 'both');
      return;
    case 'duplicate':
      if (view === 'list' && ps) {
        // Halves that overlap by one when odd: together they are the whole call, alone neither is.
        const half = Math.ceil(ps.length / 2);
        w.participants = part === 'A' ? ps.slice(0, half) : ps.slice(ps.length - half);
      }
      return;
    default:
  }
}
