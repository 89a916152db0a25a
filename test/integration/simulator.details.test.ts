import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_NOW,
  startSimulator,
  UNUSABLE_GET_ANSWERS,
  type DetailQuirks,
  type FaultProfile,
  type Simulator,
  type TruthCall,
  type UnusableGetSpec,
} from '../../src/simulator/index.js';

// Every detail quirk over real HTTP (plain fetch, not callsync's client): what the List entries and
// Get Call answers hold, and that the truth follows.

const KEY = 'k';
const APP = 'd';
const N = 600;
const MINUTE_KEYS = ['totalAudioMinutes', 'totalVideoMinutes', 'totalDuration', 'totalDurationInMinutes'];

type Wire = Record<string, unknown>;
interface Answer {
  status: number;
  type: string;
  location: string | null;
  text: string;
}

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(details: DetailQuirks | undefined, extra: FaultProfile = {}, calls = N): Promise<Simulator> {
  sim = await startSimulator({ apps: [{ appId: APP, region: 'us', apiKey: KEY, calls, seed: 33 }], faults: { ...extra, ...(details ? { details } : {}) } });
  return sim;
}

async function fetchText(url: string): Promise<Answer> {
  const res = await fetch(url, { headers: { apikey: KEY }, redirect: 'manual' });
  return { status: res.status, type: res.headers.get('content-type') ?? '', location: res.headers.get('location'), text: await res.text() };
}

async function listPage(s: Simulator, page: number, perPage: number): Promise<{ data: Wire[]; meta: { pagination: Record<string, number> } }> {
  const a = await fetchText(`${s.baseUrls(APP).callsBaseUrl}/calls?page=${page}&perPage=${perPage}`);
  expect(a.status).toBe(200);
  return JSON.parse(a.text) as { data: Wire[]; meta: { pagination: Record<string, number> } };
}

/** Every List entry, page by page (each page's entries kept apart). */
async function listPages(s: Simulator, perPage = 100): Promise<Wire[][]> {
  const pages: Wire[][] = [];
  for (let p = 1; p < 200; p++) {
    const { data } = await listPage(s, p, perPage);
    if (data.length === 0) return pages;
    pages.push(data);
  }
  throw new Error('listing never ended');
}

async function listed(s: Simulator): Promise<Map<string, Wire>> {
  return new Map((await listPages(s)).flat().map((e) => [e.sessionId as string, e]));
}

function getAnswer(s: Simulator, id: string): Promise<Answer> {
  return fetchText(`${s.baseUrls(APP).callsBaseUrl}/calls/${encodeURIComponent(id)}`);
}

/** The call of a proper Get Call answer, in either envelope. */
async function getCall(s: Simulator, id: string): Promise<Wire> {
  const a = await getAnswer(s, id);
  expect(a.status, `Get ${id}: ${a.text.slice(0, 200)}`).toBe(200);
  const { data } = JSON.parse(a.text) as { data: Wire | Wire[] };
  const call = Array.isArray(data) ? data[0] : data;
  expect(call?.sessionId).toBe(id);
  return call!;
}

const participantsOf = (w: Wire): Wire[] => (Array.isArray(w.participants) ? (w.participants as Wire[]) : []);
const minutesOf = (p: Wire): number => Number(p.totalDurationInMinutes ?? p.totalDuration);
const truthCall = (s: Simulator, id: string): TruthCall => {
  const c = s.truth(APP).calls.get(id);
  expect(c, `${id} is in the truth`).toBeDefined();
  return c!;
};

describe('detail quirks', () => {
  it('details: {} answers List and Get byte for byte like no details, and is validated', async () => {
    const plain = await start(undefined);
    const pages = (await listPages(plain)).flat();
    const ids = pages.filter((_, k) => k % 37 === 0).map((e) => e.sessionId as string);
    const expected = [JSON.stringify(pages), ...(await Promise.all(ids.map(async (id) => (await getAnswer(plain, id)).text)))];
    const truth = JSON.stringify([...plain.truth(APP).calls.values()]);
    await plain.close();
    const quiet = await start({});
    const got = [JSON.stringify((await listPages(quiet)).flat()), ...(await Promise.all(ids.map(async (id) => (await getAnswer(quiet, id)).text)))];
    expect(got).toEqual(expected);
    expect(JSON.stringify([...quiet.truth(APP).calls.values()])).toBe(truth);
    expect(quiet.truth(APP).unusableDetail.size).toBe(0);

    const bad: unknown[] = [
      { summaryListEntrys: true },
      { unusableGet: { calls: 1, answer: 'teapot' } },
      { unusableGet: { calls: 1, answer: 'null', until: 1 } },
      { unusableGet: [{ calls: -1, answer: 'null' }] },
      { unusableGet: { calls: 1, answer: 'null', retries: 2 } },
      { lateDetails: { calls: 1.5 } },
      { implausibleMinutes: { negative: -2 } },
      { transcriptions: 'yes' },
    ];
    for (const details of bad) expect(() => quiet.setFaults({ details: details as DetailQuirks }), JSON.stringify(details)).toThrow(/FaultProfile\.details/);
  });

  it('summaryListEntries: List entries leave the minutes out in three forms; Get Call answers the whole call; the truth is unchanged', async () => {
    const plain = await start(undefined);
    const truth = JSON.stringify([...plain.truth(APP).calls.values()]);
    await plain.close();
    const s = await start({ summaryListEntries: true });
    expect(JSON.stringify([...s.truth(APP).calls.values()])).toBe(truth);
    const forms = { participants: 0, totals: 0, both: 0 };
    for (const e of (await listed(s)).values()) {
      const callMinutes = MINUTE_KEYS.some((k) => k in e);
      const ps = participantsOf(e);
      const participantMinutes = ps.some((p) => MINUTE_KEYS.some((k) => k in p));
      expect(callMinutes && participantMinutes, `${String(e.sessionId)} lists its minutes`).toBe(false);
      if (!callMinutes && (ps.length === 0 || !participantMinutes)) forms.both++;
      else if (!callMinutes) forms.totals++;
      else forms.participants++;
    }
    expect(forms.participants).toBeGreaterThan(50);
    expect(forms.totals).toBeGreaterThan(50);
    expect(forms.both).toBeGreaterThan(50);
    const answered = [...s.truth(APP).calls.values()].filter((c) => c.participants.some((p) => p.totalMinutes > 0)).slice(0, 20);
    for (const t of answered) {
      const w = await getCall(s, t.sessionId);
      expect(w.totalAudioMinutes).toBe(t.totalAudioMinutes);
      expect(participantsOf(w).map(minutesOf)).toEqual(t.participants.map((p) => p.totalMinutes));
    }
  });

  it('unusableGet: each answer as documented, on calls whose List entry is incomplete; the truth keeps them whole and names them', async () => {
    const specs: UnusableGetSpec[] = [...UNUSABLE_GET_ANSWERS.map((answer) => ({ calls: 2, answer })), { calls: 2, answer: 'error-body-200', errorCode: 'ERR_TOO_MANY_REQUESTS' }];
    const s = await start({ unusableGet: specs });
    const picked = s.detailQuirkCalls(APP).unusableGet;
    expect(picked.map((ids) => ids.length)).toEqual(specs.map(() => 2));
    const all = picked.flat();
    expect(new Set(all).size).toBe(all.length);
    const truth = s.truth(APP);
    expect([...truth.unusableDetail].sort()).toEqual([...all].sort());
    const entries = await listed(s);
    for (const id of all) {
      const t = truth.calls.get(id)!;
      expect(t.status).toBe('ended');
      expect(t.participants.some((p) => p.totalMinutes > 0)).toBe(true);
      const e = entries.get(id)!;
      const whole = MINUTE_KEYS.every((k) => k in e) && participantsOf(e).length === t.participants.length && participantsOf(e).every((p) => MINUTE_KEYS.some((k) => k in p));
      expect(whole, `${id}: its List entry must be incomplete`).toBe(false);
    }
    for (const [n, spec] of specs.entries()) {
      for (const id of picked[n]!) {
        const a = await getAnswer(s, id);
        const label = `${spec.answer} ${spec.errorCode ?? ''}`;
        if (spec.answer === 'redirect') {
          expect(a.status, label).toBe(302);
          expect(a.location, label).toBe(`https://maintenance.cometchat.invalid/v3/calls/${encodeURIComponent(id)}`);
          continue;
        }
        expect(a.status, label).toBe(200);
        switch (spec.answer) {
          case 'empty-object':
            expect(a.text).toBe('{"data":{}}');
            break;
          case 'null':
            expect(a.text).toBe('{"data":null}');
            break;
          case 'empty-array':
            expect(a.text).toBe('{"data":[]}');
            break;
          case 'no-session-id': {
            const data = (JSON.parse(a.text) as { data: Wire }).data;
            expect('sessionId' in data).toBe(false);
            expect(participantsOf(data).map(minutesOf)).toEqual(truth.calls.get(id)!.participants.map((p) => p.totalMinutes));
            break;
          }
          case 'other-session': {
            const data = (JSON.parse(a.text) as { data: Wire | Wire[] }).data;
            const other = (Array.isArray(data) ? data[0] : data)?.sessionId as string;
            expect(other).not.toBe(id);
            expect(truth.calls.has(other)).toBe(true);
            break;
          }
          case 'html-200':
            expect(a.type).toMatch(/text\/html/);
            expect(a.text).toMatch(/^<!DOCTYPE html>/);
            break;
          case 'non-json-200':
            expect(a.type).toMatch(/application\/json/);
            expect(() => JSON.parse(a.text)).toThrow();
            break;
          default:
            expect((JSON.parse(a.text) as { error: { code: string } }).error.code, label).toBe(spec.errorCode ?? 'ERR_CALL_SESSION_NOT_FOUND');
        }
      }
    }
    // 'forever': still unusable however often asked.
    const again = await getAnswer(s, picked[0]![0]!);
    expect(again.text).toBe('{"data":{}}');
    expect(s.detailQuirkCalls(APP).gets.get(picked[0]![0]!)).toBe(2);
    expect(s.truth(APP).unusableDetail.size).toBe(all.length);
  });

  it('unusableGet until k: the k-th Get Call request and later ones answer the whole call; setFaults re-arms', async () => {
    const s = await start({ unusableGet: [{ calls: 3, answer: 'empty-array', until: 3 }, { calls: 2, answer: 'redirect', until: 2 }] });
    const [arrays, redirects] = s.detailQuirkCalls(APP).unusableGet as [string[], string[]];
    const id = arrays[0]!;
    expect((await getAnswer(s, id)).text).toBe('{"data":[]}');
    expect((await getAnswer(s, id)).text).toBe('{"data":[]}');
    expect(s.truth(APP).unusableDetail.has(id)).toBe(true);
    const w = await getCall(s, id);
    expect(participantsOf(w).map(minutesOf)).toEqual(truthCall(s, id).participants.map((p) => p.totalMinutes));
    await getCall(s, id);
    expect(s.truth(APP).unusableDetail.has(id)).toBe(false);
    expect(s.detailQuirkCalls(APP).gets.get(id)).toBe(4);
    expect((await getAnswer(s, redirects[0]!)).status).toBe(302);
    await getCall(s, redirects[0]!);
    expect([...s.truth(APP).unusableDetail].sort()).toEqual([...arrays.slice(1), redirects[1]!].sort());

    s.setFaults({ details: { unusableGet: [{ calls: 3, answer: 'empty-array', until: 3 }, { calls: 2, answer: 'redirect', until: 2 }] } });
    expect(s.detailQuirkCalls(APP).gets.get(id)).toBe(0);
    expect((await getAnswer(s, id)).text).toBe('{"data":[]}');
  });

  it('lateDetails: recordings, minutes or endedAt appear only when settled; the List entry never changes', async () => {
    const s = await start({ lateDetails: { calls: 8 } });
    const ids = s.detailQuirkCalls(APP).lateDetails;
    expect(ids).toHaveLength(8);
    const listBefore = await listed(s);
    const before = new Map(ids.map((id) => [id, truthCall(s, id)]));
    const kinds = { recordings: 0, minutes: 0, endedAt: 0 };
    for (const id of ids) {
      const t = before.get(id)!;
      const w = await getCall(s, id);
      expect(t.status).toBe('ended');
      expect(w.status).toBe('ended');
      const noRecordings = t.hasRecording && t.recordings.length === 0;
      const zeroMinutes = t.participants.some((p) => p.isJoined) && t.participants.every((p) => p.totalMinutes === 0) && t.totalDurationMinutes === 0;
      const noEnd = t.endedAt === null;
      if (noRecordings) {
        kinds.recordings++;
        expect(w.hasRecording).toBe(true);
        expect(w.recordings).toEqual([]);
      }
      if (zeroMinutes) {
        kinds.minutes++;
        expect(participantsOf(w).every((p) => minutesOf(p) === 0)).toBe(true);
      }
      if (noEnd) {
        kinds.endedAt++;
        expect('endedAt' in w).toBe(false);
      }
      expect(noRecordings || zeroMinutes || noEnd, `${id} looks unsettled`).toBe(true);
    }
    expect(kinds.recordings).toBeGreaterThan(0);
    expect(kinds.minutes).toBeGreaterThan(0);
    expect(kinds.endedAt).toBeGreaterThan(0);
    // Newest answered calls: a client re-fetches only recent calls (ended within a few days).
    for (const t of before.values()) expect(DEFAULT_NOW - (t.startedAt ?? 0)).toBeLessThan(4 * 86_400);

    const res = s.advance(APP, { settleLateDetails: true });
    expect([...res.settled].sort()).toEqual([...ids].sort());
    expect(s.detailQuirkCalls(APP).lateDetailsSettled).toBe(true);
    const listAfter = await listed(s);
    for (const id of ids) {
      expect(JSON.stringify(listAfter.get(id)), `${id}: the List entry stays as it was`).toBe(JSON.stringify(listBefore.get(id)));
      const t = truthCall(s, id);
      const w = await getCall(s, id);
      expect(t.endedAt).not.toBeNull();
      expect(w.endedAt).toBe(t.endedAt);
      expect(t.participants.filter((p) => p.isJoined).every((p) => p.totalMinutes > 0)).toBe(true);
      expect(participantsOf(w).map(minutesOf)).toEqual(t.participants.map((p) => p.totalMinutes));
      if (t.hasRecording) {
        expect(t.recordings.length).toBeGreaterThan(0);
        expect(Array.isArray(w.recordings) ? (w.recordings as Wire[]).length : w.recordingUrl ? 1 : 0).toBe(t.recordings.length);
      }
    }
    expect(s.advance(APP, { settleLateDetails: true }).settled).toEqual([]);
  });

  it('participantsWithoutUid: one participant without uid, or with uid ""; the truth has uid "" with its minutes', async () => {
    const s = await start({ participantsWithoutUid: 4 });
    const { absent, empty } = s.detailQuirkCalls(APP).participantsWithoutUid;
    expect(absent).toHaveLength(2);
    expect(empty).toHaveLength(2);
    for (const id of [...absent, ...empty]) {
      const ps = participantsOf(await getCall(s, id));
      const k = ps.findIndex((p) => !('uid' in p) || p.uid === '');
      expect(k).toBeGreaterThanOrEqual(0);
      expect('uid' in ps[k]!).toBe(empty.includes(id));
      expect(ps.filter((p) => !('uid' in p) || p.uid === '')).toHaveLength(1);
      const t = truthCall(s, id).participants[k]!;
      expect(t.uid).toBe('');
      expect(t.totalMinutes).toBeGreaterThan(0);
      expect(minutesOf(ps[k]!)).toBe(t.totalMinutes);
    }
  });

  it('callsWithoutType: no type (truth null), one call without status (truth null, ended otherwise), one of type screenshare', async () => {
    const s = await start({ callsWithoutType: 2 });
    const { noType, noStatus, unknownType } = s.detailQuirkCalls(APP).callsWithoutType;
    expect([noType.length, noStatus.length, unknownType.length]).toEqual([2, 1, 1]);
    const entries = await listed(s);
    for (const id of noType) {
      expect('type' in (await getCall(s, id))).toBe(false);
      expect('type' in entries.get(id)!).toBe(false);
      expect(truthCall(s, id).type).toBeNull();
    }
    const w = await getCall(s, noStatus[0]!);
    expect('status' in w).toBe(false);
    expect(typeof w.endedAt).toBe('number');
    const t = truthCall(s, noStatus[0]!);
    expect(t.status).toBeNull();
    expect(t.endedAt).toBe(w.endedAt);
    expect((await getCall(s, unknownType[0]!)).type).toBe('screenshare');
    expect(truthCall(s, unknownType[0]!).type).toBe('screenshare');
  });

  it('implausibleMinutes: a negative participant figure, 10,000 minutes on a short call, call totals over 24 h; the truth as sent', async () => {
    const s = await start({ implausibleMinutes: { negative: 2, huge: 2 } });
    const { negative, huge } = s.detailQuirkCalls(APP).implausibleMinutes;
    expect(negative).toHaveLength(2);
    expect(huge).toHaveLength(2);
    for (const id of negative) {
      const ps = participantsOf(await getCall(s, id));
      expect(ps.some((p) => minutesOf(p) < 0)).toBe(true);
      expect(truthCall(s, id).participants.some((p) => p.totalMinutes < 0)).toBe(true);
    }
    let participantHuge = 0;
    let overDay = 0;
    for (const id of huge) {
      const w = await getCall(s, id);
      const t = truthCall(s, id);
      const wall = ((t.endedAt ?? 0) - (t.startedAt ?? 0)) / 60;
      if (participantsOf(w).some((p) => minutesOf(p) === 10_000)) {
        participantHuge++;
        expect(10_000).toBeGreaterThan(wall * t.participants.length);
        expect(t.participants.some((p) => p.totalMinutes === 10_000)).toBe(true);
      } else {
        overDay++;
        expect(w.totalDuration).toBe('26:00:00');
        expect(w.totalDurationInMinutes).toBe(1560);
        expect(t.totalDurationMinutes).toBe(1560);
      }
    }
    expect([participantHuge, overDay]).toEqual([1, 1]);
  });

  it('liveBrieflyNotFound: a live call answers not-found twice, then is found again, and ends with endOngoing', async () => {
    const s = await start({ liveBrieflyNotFound: 2 });
    const ids = s.detailQuirkCalls(APP).liveBrieflyNotFound;
    expect(ids).toHaveLength(2);
    const entries = await listed(s);
    for (const id of ids) {
      expect(entries.get(id)?.status).toBe('ongoing');
      for (let k = 0; k < 2; k++) {
        const a = await getAnswer(s, id);
        expect(a.status).toBe(404);
        expect(a.text).toContain('ERR_CALL_SESSION_NOT_FOUND');
      }
      expect((await getCall(s, id)).status).toBe('ongoing');
      expect(s.truth(APP).notFound.has(id)).toBe(false);
      expect(truthCall(s, id).status).toBe('ongoing');
    }
    expect(s.stats(APP).notFound).toBe(4);
    const { ended } = s.advance(APP, { endOngoing: true });
    for (const id of ids) {
      expect(ended).toContain(id);
      const w = await getCall(s, id);
      const t = truthCall(s, id);
      expect(w.status).toBe('ended');
      expect(t.status).toBe('ended');
      expect(w.endedAt).toBe(t.endedAt);
      expect(t.participants.some((p) => p.totalMinutes > 0)).toBe(true);
    }
  });

  it('stuckInitiated: calls stay initiated, initiated 10+ days before now, whatever advance() does', async () => {
    const s = await start({ stuckInitiated: 3 });
    const ids = s.detailQuirkCalls(APP).stuckInitiated;
    expect(ids).toHaveLength(3);
    const { ended } = s.advance(APP, { endOngoing: true, newCalls: 2, settleLateDetails: true });
    const entries = await listed(s);
    for (const id of ids) {
      expect(ended).not.toContain(id);
      const w = await getCall(s, id);
      const t = truthCall(s, id);
      expect([w.status, entries.get(id)?.status, t.status]).toEqual(['initiated', 'initiated', 'initiated']);
      expect(t.initiatedAt).not.toBeNull();
      expect(DEFAULT_NOW - t.initiatedAt!).toBeGreaterThanOrEqual(10 * 86_400);
      expect(w.initiatedAt).toBe(t.initiatedAt);
      expect(t.endedAt).toBeNull();
      expect(t.participants.every((p) => !p.isJoined && p.totalMinutes === 0)).toBe(true);
    }
  });

  it('transcriptions: at most 5 newest per transcribed call, metaData and tags in every variant; the truth as sent', async () => {
    const s = await start({ transcriptions: true });
    const truth = s.truth(APP);
    const entries = await listed(s);
    const transcribed = new Set(s.detailQuirkCalls(APP).transcribed);
    expect(transcribed.size).toBeGreaterThan(30);
    const seen = { meta: new Set<string>(), tags: new Set<string>(), flag: new Set<string>(), counts: new Set<number>() };
    for (const [id, e] of entries) {
      const t = truth.calls.get(id)!;
      expect(t.hasTranscription).toBe(transcribed.has(id));
      expect(t.metaData).toEqual('metaData' in e ? e.metaData : null);
      expect(t.tags).toEqual('tags' in e ? e.tags : null);
      seen.meta.add('metaData' in e ? (Array.isArray(e.metaData) ? `array${(e.metaData as unknown[]).length}` : typeof e.metaData) : 'absent');
      seen.tags.add('tags' in e ? `tags${(e.tags as string[]).length}` : 'absent');
      seen.flag.add(String(e.hasTranscription));
      const sent = (e.transcriptions as Wire[] | undefined) ?? [];
      expect(sent).toEqual(t.transcriptions);
      if (!transcribed.has(id)) {
        expect(sent).toEqual([]);
        continue;
      }
      expect(e.hasTranscription).toBe(true);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.length).toBeLessThanOrEqual(5);
      seen.counts.add(sent.length);
      const starts = sent.map((x) => x.startTime as number);
      expect(starts).toEqual([...starts].sort((a, b) => b - a));
      for (const x of sent) {
        expect(Object.keys(x).sort()).toEqual(['endTime', 'mid', 'roomName', 'startTime', 'tid', 'transcriptDate', 'transcriptUrl']);
        expect(x.transcriptDate).toBe(new Date((x.startTime as number) * 1000).toISOString());
      }
    }
    expect([...seen.meta].sort()).toEqual(['absent', 'array0', 'array2', 'object']);
    expect([...seen.tags].sort()).toEqual(['absent', 'tags0', 'tags1', 'tags3']);
    expect([...seen.flag].sort()).toEqual(['false', 'true', 'undefined']);
    expect(seen.counts.has(5)).toBe(true);
    const one = [...transcribed][0]!;
    expect((await getCall(s, one)).transcriptions).toEqual(truth.calls.get(one)!.transcriptions);
  });

  it('duplicateEntries: a call listed twice (same or next page), each entry with part of the participants; total counts calls', async () => {
    const perPage = 20;
    const plainIds = await (async () => {
      const plain = await start(undefined);
      const ids = (await listPages(plain, perPage)).flat().map((e) => e.sessionId as string);
      await plain.close();
      return ids;
    })();
    const s = await start({ duplicateEntries: 6 });
    const dup = new Set(s.detailQuirkCalls(APP).duplicateEntries);
    expect(dup.size).toBe(6);
    const pages = await listPages(s, perPage);
    const entries = pages.flat();
    expect(entries).toHaveLength(N + 6);
    expect((await listPage(s, 1, perPage)).meta.pagination.total).toBe(N);
    // First sightings in order are the plain listing.
    const firsts: string[] = [];
    for (const e of entries) if (!firsts.includes(e.sessionId as string)) firsts.push(e.sessionId as string);
    expect(firsts).toEqual(plainIds);
    let samePage = 0;
    let nextPage = 0;
    for (const id of dup) {
      const where = pages.flatMap((p, k) => p.filter((e) => e.sessionId === id).map((e) => ({ k, e })));
      expect(where).toHaveLength(2);
      const [a, b] = where as [{ k: number; e: Wire }, { k: number; e: Wire }];
      if (a.k === b.k) samePage++;
      else if (b.k === a.k + 1) nextPage++;
      const whole = participantsOf(await getCall(s, id));
      const key = (p: Wire): string => `${String(p.uid)}|${String(p.deviceId ?? p.deviceID ?? '')}|${String(p.joinedAt ?? '')}`;
      const union = new Set([...participantsOf(a.e), ...participantsOf(b.e)].map(key));
      expect(participantsOf(a.e).length).toBeLessThan(whole.length);
      expect(participantsOf(b.e).length).toBeLessThan(whole.length);
      expect([...union].sort()).toEqual(whole.map(key).sort());
      expect(truthCall(s, id).participants).toHaveLength(whole.length);
    }
    expect(samePage + nextPage).toBe(6);
    expect(nextPage).toBeGreaterThan(0);
    expect(samePage).toBeGreaterThan(0);
  });

  it('picks are disjoint and deterministic; setFaults re-picks and resets counters and settled state', async () => {
    const details: DetailQuirks = {
      unusableGet: { calls: 3, answer: 'null' }, lateDetails: { calls: 3 }, participantsWithoutUid: 3, callsWithoutType: 2,
      implausibleMinutes: { negative: 2, huge: 2 }, liveBrieflyNotFound: 2, stuckInitiated: 2, duplicateEntries: 3,
    };
    const others: FaultProfile = { notFoundCalls: 5, malformedCalls: 3, quirks: { futureCalls: 3 } };
    const s = await start(details, others);
    const d = s.detailQuirkCalls(APP);
    const all = [
      ...d.unusableGet.flat(), ...d.lateDetails, ...d.participantsWithoutUid.absent, ...d.participantsWithoutUid.empty,
      ...d.callsWithoutType.noType, ...d.callsWithoutType.noStatus, ...d.callsWithoutType.unknownType,
      ...d.implausibleMinutes.negative, ...d.implausibleMinutes.huge, ...d.liveBrieflyNotFound, ...d.stuckInitiated, ...d.duplicateEntries,
    ];
    expect(all).toHaveLength(3 + 3 + 3 + 4 + 4 + 2 + 2 + 3);
    expect(new Set(all).size).toBe(all.length);
    const truth = s.truth(APP);
    for (const id of all) {
      expect(truth.notFound.has(id) || truth.malformed.has(id)).toBe(false);
      expect(truth.calls.has(id)).toBe(true);
    }
    await getAnswer(s, d.unusableGet[0]![0]!);
    s.advance(APP, { settleLateDetails: true });
    s.setFaults({ ...others, details });
    const again = s.detailQuirkCalls(APP);
    expect({ ...again, gets: [] }).toEqual({ ...d, gets: [] });
    expect([...again.gets.values()].every((n) => n === 0)).toBe(true);
    expect(again.lateDetailsSettled).toBe(false);
    s.setFaults({});
    expect(s.detailQuirkCalls(APP).lateDetails).toEqual([]);
    expect(s.truth(APP).calls.get(d.callsWithoutType.noType[0]!)?.type).not.toBeNull();
  });
});
