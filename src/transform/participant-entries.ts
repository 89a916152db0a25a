import type { ApiCall, ApiParticipant } from '../source/schemas.js';

/**
 * Participant entries as a call states them: which device an entry is, and which entries repeat
 * another exactly. Apart from call-rows.ts so that module stays a size one can read.
 */

/** A participant's device as stored: `deviceId` or `deviceID`, its text; '' when absent. */
export function deviceIdOf(p: ApiParticipant): string {
  const d = p.deviceId ?? p.deviceID;
  return d == null ? '' : String(d);
}

/** Whether a participant entry says it joined: `isJoined` (or `hasJoined`), else a join time. */
export function saysJoined(p: ApiParticipant): boolean {
  return p.isJoined ?? p.hasJoined ?? p.joinedAt != null;
}

/**
 * A participant entry's user, device, times, minutes and state: two entries alike in all of them
 * are one entry repeated. The state counts: one user rung twice (rejected, then unanswered), both
 * at zero, is two invitations (an invitee's row was lost when it did not: helper-63).
 */
function participantEntryKey(p: ApiParticipant): string {
  return `${p.uid}\u0000${deviceIdOf(p)}\u0000${p.joinedAt}\u0000${p.leftAt}\u0000${p.totalAudioMinutes}\u0000${p.totalVideoMinutes}\u0000${p.totalDuration ?? p.totalDurationInMinutes}\u0000${p.state}\u0000${p.isJoined ?? p.hasJoined}`;
}

/** Whether two participant entries are alike in participantEntryKey's fields. */
function sameEntry(a: ApiParticipant, b: ApiParticipant): boolean {
  return a.uid === b.uid && a.joinedAt === b.joinedAt && a.leftAt === b.leftAt && a.totalAudioMinutes === b.totalAudioMinutes
    && a.totalVideoMinutes === b.totalVideoMinutes && (a.totalDuration ?? a.totalDurationInMinutes) === (b.totalDuration ?? b.totalDurationInMinutes)
    && a.state === b.state && (a.isJoined ?? a.hasJoined) === (b.isJoined ?? b.hasJoined) && deviceIdOf(a) === deviceIdOf(b);
}

/**
 * A call's participant entries with exact repeats left out (the first of each kept, in order); the
 * same array when there are none, as almost always. Small lists are compared pairwise: no key text
 * is built on the sync's hot path.
 */
export function distinctParticipants(ps: readonly ApiParticipant[]): readonly ApiParticipant[] {
  if (ps.length < 2) return ps;
  if (ps.length > 16) {
    const seen = new Set<string>();
    const out = ps.filter((p) => {
      const k = participantEntryKey(p);
      return !seen.has(k) && seen.add(k) !== undefined;
    });
    return out.length === ps.length ? ps : out;
  }
  let out: ApiParticipant[] | undefined;
  for (let i = 1; i < ps.length; i++) {
    const p = ps[i]!;
    let repeat = false;
    for (let j = 0; j < i && !repeat; j++) repeat = sameEntry(ps[j]!, p);
    if (repeat) out ??= ps.slice(0, i);
    else out?.push(p);
  }
  return out ?? ps;
}

/** How many different participant entries a call has (an entry repeated exactly counts once). */
export function distinctParticipantEntries(call: ApiCall): number {
  return distinctParticipants(call.participants ?? []).length;
}

/**
 * Two entries of one session stated differently, if any: the same user and device joining at the
 * same moment and leaving at the same moment (or one of them without a leave time), with other
 * minutes (exact repeats are one entry, see distinctParticipants). Which one holds is not known,
 * and both stored count the session twice (a Get Call repeating each participant with its minutes
 * rounded, or without its leftAt: 1,940 user-minutes stored as 3,243, ok: session 29's probe).
 * Two leave times stated are two sessions (a device dropping and rejoining within the second), and
 * entries that never joined (no join time, 0, or said so) are invitations, not sessions: both made
 * every run partial when they were read as one session (helper-63).
 */
export function sessionStatedTwice(ps: readonly ApiParticipant[]): string | undefined {
  if (ps.length < 2) return undefined;
  const joined = distinctParticipants(ps).filter((p) => p.joinedAt != null && p.joinedAt > 0 && (p.isJoined ?? p.hasJoined) !== false);
  if (joined.length < 2) return undefined;
  const clash = (p: ApiParticipant, q: ApiParticipant): boolean => q.leftAt == null || p.leftAt == null || q.leftAt === p.leftAt;
  if (joined.length <= 16) {
    // Pairwise: no key text on the hot path (every Get answer and complete entry comes here).
    for (let i = 1; i < joined.length; i++) {
      const p = joined[i]!;
      for (let j = 0; j < i; j++) {
        const q = joined[j]!;
        if (q.joinedAt === p.joinedAt && q.uid === p.uid && deviceIdOf(q) === deviceIdOf(p) && clash(p, q)) return twice(p);
      }
    }
    return undefined;
  }
  // Grouped by user, device and join time.
  const byStart = new Map<string, ApiParticipant[]>();
  for (const p of joined) {
    const k = `${p.uid}\u0000${deviceIdOf(p)}\u0000${p.joinedAt}`;
    const same = byStart.get(k);
    if (!same) {
      byStart.set(k, [p]);
      continue;
    }
    if (same.some((q) => clash(p, q))) return twice(p);
    same.push(p);
  }
  return undefined;
}

const twice = (p: ApiParticipant): string =>
  `participant ${JSON.stringify(String(p.uid ?? '').slice(0, 80))} on device ${JSON.stringify(deviceIdOf(p).slice(0, 80))}, joined at ${p.joinedAt}, is stated twice with other minutes or without a leave time`;
