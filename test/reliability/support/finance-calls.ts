import { FakeCallsService, type FakeCall } from './fake-calls-service.js';

/**
 * A fake service holding calls placed where periods are cut (probe75): across midnight, across a
 * month's end in UTC and in Europe/Berlin, on both sides of the DST change of 2026-10-25 in Berlin
 * (02:00–03:00 local happens twice), one call with implausible minutes (flagged) and one with
 * minutes but no start time (in no period's figures). Every call's minutes are known here, so each
 * output can be held against this truth, not only against another output.
 */
export const T = (iso: string): number => Date.parse(iso) / 1000;

export const FLAGGED_MINUTES = 50_000;

export interface FinanceCalls {
  service: FakeCallsService;
  flagged: FakeCall;
  unplaced: FakeCall;
}

/** Gives `c` an exact start and end, its participants joined for (nearly) all of it, and totals that sum them. */
function shape(c: FakeCall, start: number, end: number): void {
  Object.assign(c, { status: 'ended', initiatedAt: start - 5, startedAt: start, endedAt: end });
  c.participants.forEach((p, i) => {
    const joinedAt = start + i;
    const leftAt = end - i;
    const minutes = (leftAt - joinedAt) / 60;
    Object.assign(p, { deviceId: `dev-${p.uid}-${c.sessionId.slice(-6)}`, isJoined: true, joinedAt, leftAt, state: 'ended', totalAudioMinutes: c.type === 'audio' ? minutes : 0, totalVideoMinutes: c.type === 'video' ? minutes : 0, totalDuration: minutes });
  });
  totals(c);
}

function totals(c: FakeCall): void {
  const sum = (k: 'totalAudioMinutes' | 'totalVideoMinutes'): number => c.participants.reduce((s, p) => s + p[k], 0);
  Object.assign(c, { totalAudioMinutes: sum('totalAudioMinutes'), totalVideoMinutes: sum('totalVideoMinutes'), totalDurationInMinutes: sum('totalAudioMinutes') + sum('totalVideoMinutes'), totalParticipants: c.participants.length });
  delete c.totalDuration;
}

export async function startFinanceService(): Promise<FinanceCalls> {
  const service = await FakeCallsService.start({ seed: 75, calls: 0, ongoing: 0 });
  const add = (startIso: string | number, endIso: string | number): FakeCall => {
    const start = typeof startIso === 'number' ? startIso : T(startIso);
    const end = typeof endIso === 'number' ? endIso : T(endIso);
    const c = service.addCall({ at: start - 5, status: 'ended' });
    shape(c, start, end);
    return c;
  };
  // Spread over October (UTC), ~18 h apart, of various lengths.
  for (let i = 0; i < 40; i++) {
    const start = T('2026-10-01T02:00:00Z') + i * 65_537;
    add(start, start + 60 + ((i * 37) % 1800));
  }
  add('2026-10-31T23:50:00Z', '2026-11-01T00:20:00Z'); // October in UTC, November 1 00:50 in Berlin
  add('2026-10-31T22:55:00Z', '2026-10-31T23:30:00Z'); // October in both
  add('2026-09-30T22:30:00Z', '2026-09-30T23:10:00Z'); // September in UTC, October 1 00:30 in Berlin
  add('2026-10-25T00:30:00Z', '2026-10-25T00:50:00Z'); // 02:30 CEST, the first 02:30 of the DST day in Berlin
  add('2026-10-25T01:30:00Z', '2026-10-25T01:50:00Z'); // 02:30 CET, the second
  add('2026-10-14T23:40:00Z', '2026-10-15T00:30:00Z'); // across midnight (UTC): October 14
  add('2026-10-24T22:30:00Z', '2026-10-24T23:00:00Z'); // UTC day October 24, Berlin day October 25
  add('2026-10-25T22:59:00Z', '2026-10-25T23:30:00Z'); // Berlin 23:59 October 25 (CET)
  add('2026-10-25T23:00:00Z', '2026-10-25T23:20:00Z'); // Berlin 00:00 October 26
  add('2026-09-15T12:00:00Z', '2026-09-15T12:30:00Z');
  add('2026-11-03T12:00:00Z', '2026-11-03T12:30:00Z');
  const flagged = add('2026-10-10T10:00:00Z', '2026-10-10T10:05:00Z');
  const p = flagged.participants[0]!;
  Object.assign(p, { totalDuration: FLAGGED_MINUTES, totalAudioMinutes: flagged.type === 'audio' ? FLAGGED_MINUTES : 0, totalVideoMinutes: flagged.type === 'video' ? FLAGGED_MINUTES : 0 });
  totals(flagged);
  const unplaced = add('2026-10-20T12:00:00Z', '2026-10-20T12:30:00Z');
  delete unplaced.startedAt;
  return { service, flagged, unplaced };
}

export const minutesOf = (c: FakeCall): number => c.participants.reduce((n, p) => n + p.totalDuration, 0);
export const audioOf = (c: FakeCall): number => c.participants.reduce((n, p) => n + p.totalAudioMinutes, 0);
export const videoOf = (c: FakeCall): number => c.participants.reduce((n, p) => n + p.totalVideoMinutes, 0);
