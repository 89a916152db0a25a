import type { TruthCall, TruthRelation } from './truth.js';

/** Minutes are floats; two totals "equal" when within this (the brief's reconciliation tolerance). */
export const MINUTES_TOLERANCE = 0.01;

export const NON_FINAL_STATUSES: ReadonlySet<string> = new Set(['initiated', 'ongoing']);

/** Check codes in the order they are reported in `issues`. */
export const ISSUE_CODES = [
  'audio_plus_video_ne_total',
  'timer_ne_minutes',
  'participant_count',
  'participant_outside_call',
  'negative_duration',
  'totals_ne_participants',
] as const;
export type IssueCode = (typeof ISSUE_CODES)[number];

/** "HH:MM:SS" (hours may exceed 99) → seconds; null when the text is not in that form. */
export function parseTimer(text: string): number | null {
  const parts = text.split(':');
  if (parts.length !== 3) return null;
  let seconds = 0;
  for (const part of parts) {
    if (part.length === 0) return null;
    const n = Number(part);
    if (!Number.isInteger(n) || n < 0) return null;
    seconds = seconds * 60 + n;
  }
  return seconds;
}

export function formatTimer(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  return `${String(hh).padStart(2, '0')}:${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')}`;
}

function near(a: number, b: number): boolean {
  return Math.abs(a - b) <= MINUTES_TOLERANCE;
}

export type Classifiable = Omit<TruthCall, 'relation' | 'issues'>;

/**
 * The relation between call-level totals and participants, and the failed checks, by the
 * definition the ground truth uses:
 *   - `incomplete` for a call that is not final (initiated/ongoing), with no issues: its totals are
 *     not meaningful yet. This is decided first.
 *   - else `participant_sum` when both call totals equal the participant sums (within 0.01);
 *   - else `wall_clock` when totalAudioMinutes equals (endedAt-startedAt)/60 and totalVideoMinutes
 *     is 0 or equals it too;
 *   - else `mismatch`, which always carries `totals_ne_participants`.
 * The other checks are reported for final calls whatever the relation.
 */
export function classifyCall(call: Classifiable): { relation: TruthRelation; issues: IssueCode[] } {
  // A call without status is final when it has ended (as callsync's isFinalCall decides).
  if (call.status === null ? call.endedAt === null : NON_FINAL_STATUSES.has(call.status)) return { relation: 'incomplete', issues: [] };

  let audio = 0;
  let video = 0;
  for (const p of call.participants) {
    audio += p.audioMinutes;
    video += p.videoMinutes;
  }
  let relation: TruthRelation;
  if (near(call.totalAudioMinutes, audio) && near(call.totalVideoMinutes, video)) {
    relation = 'participant_sum';
  } else if (
    call.startedAt !== null &&
    call.endedAt !== null &&
    near(call.totalAudioMinutes, (call.endedAt - call.startedAt) / 60) &&
    (near(call.totalVideoMinutes, 0) || near(call.totalVideoMinutes, (call.endedAt - call.startedAt) / 60))
  ) {
    relation = 'wall_clock';
  } else {
    relation = 'mismatch';
  }

  const issues: IssueCode[] = [];
  if (!near(call.totalDurationMinutes, call.totalAudioMinutes + call.totalVideoMinutes)) {
    issues.push('audio_plus_video_ne_total');
  }
  if (call.totalDuration !== null && parseTimer(call.totalDuration) !== Math.round(call.totalDurationMinutes * 60)) {
    issues.push('timer_ne_minutes');
  }
  if (call.totalParticipants !== call.participants.length) issues.push('participant_count');
  if (call.startedAt !== null && call.endedAt !== null) {
    const { startedAt, endedAt } = call;
    const outside = call.participants.some(
      (p) => (p.joinedAt !== null && (p.joinedAt < startedAt || p.joinedAt > endedAt)) ||
        (p.leftAt !== null && (p.leftAt > endedAt || p.leftAt < startedAt)),
    );
    if (outside) issues.push('participant_outside_call');
    if (endedAt < startedAt) issues.push('negative_duration');
  }
  if (relation === 'mismatch') issues.push('totals_ne_participants');
  return { relation, issues };
}

/** The call with `relation` and `issues` recomputed from its fields. */
export function withClassification(call: Classifiable): TruthCall {
  const { relation, issues } = classifyCall(call);
  return { ...call, relation, issues };
}
