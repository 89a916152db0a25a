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

/** A participant entry's user, device, times and minutes: two entries alike in all of them are one entry repeated. */
function participantEntryKey(p: ApiParticipant): string {
  return `${p.uid}\u0000${deviceIdOf(p)}\u0000${p.joinedAt}\u0000${p.leftAt}\u0000${p.totalAudioMinutes}\u0000${p.totalVideoMinutes}\u0000${p.totalDuration ?? p.totalDurationInMinutes}`;
}

/** Whether two participant entries are alike in user, device, times and minutes (participantEntryKey's fields). */
function sameEntry(a: ApiParticipant, b: ApiParticipant): boolean {
  return a.uid === b.uid && a.joinedAt === b.joinedAt && a.leftAt === b.leftAt && a.totalAudioMinutes === b.totalAudioMinutes
    && a.totalVideoMinutes === b.totalVideoMinutes && (a.totalDuration ?? a.totalDurationInMinutes) === (b.totalDuration ?? b.totalDurationInMinutes)
    && deviceIdOf(a) === deviceIdOf(b);
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
 * same moment, with other leave times or minutes (exact repeats are one entry, see
 * distinctParticipants). Which one holds is not known, and both stored count the session twice
 * (a Get Call repeating each participant with its minutes rounded, or without its leftAt: 1,940
 * user-minutes stored as 3,243, ok: session 29's probe). A device rejoining has a later joinedAt.
 */
export function sessionStatedTwice(ps: readonly ApiParticipant[]): string | undefined {
  if (ps.length < 2) return undefined;
  const distinct = distinctParticipants(ps);
  if (distinct.length > 64) {
    const seen = new Set<string>();
    for (const p of distinct) {
      if (p.joinedAt == null) continue;
      const k = `${p.uid}\u0000${deviceIdOf(p)}\u0000${p.joinedAt}`;
      if (seen.has(k)) return twice(p);
      seen.add(k);
    }
    return undefined;
  }
  for (let i = 1; i < distinct.length; i++) {
    const p = distinct[i]!;
    if (p.joinedAt == null) continue;
    for (let j = 0; j < i; j++) {
      const q = distinct[j]!;
      if (q.joinedAt === p.joinedAt && q.uid === p.uid && deviceIdOf(q) === deviceIdOf(p)) return twice(p);
    }
  }
  return undefined;
}

const twice = (p: ApiParticipant): string =>
  `participant ${JSON.stringify(String(p.uid ?? '').slice(0, 80))} on device ${JSON.stringify(deviceIdOf(p).slice(0, 80))}, joined at ${p.joinedAt}, is stated twice with other leave times or minutes`;
