import { afterAll, describe, expect, it } from 'vitest';
import type { FakeCall, FakeCallsService, Wire } from './support/fake-calls-service.js';
import { nights, tmp, type Night } from './support/nights.js';

/**
 * Session 29's third probe (helper-63) of that session's own changes, each a run that was partial
 * on every night with nothing wrong, or ok with something wrong, before its fix:
 * - F1: a device dropping and rejoining within the same second (two sessions, one joinedAt) read as
 *   one session stated twice (ed8c1b2): partial every night, the retry list growing;
 * - F2: invitees carrying `joinedAt: 0`, one rung twice: the same; and two invitations differing
 *   only in state were taken for an exact repeat (an invitee row lost);
 * - F3, F7: the audits drawn after the listing (a35f9a4) owed an answer for a call whose recordings
 *   retention removed (an answer "older than its entry") or that Get Call refuses: partial forever;
 * - F5 (older): the SDK's single recordingUrl refilled from the stored answer after Get Call said
 *   hasRecording false: a deleted recording stayed stored, ok;
 * - F6: two recordings with one rid and times but other files (.mp4, .m4a) stored as one (e1d40a6).
 * Each runs nightly syncs (synced_at moved back two hours between them, a new call each night) and
 * compares the database with the fake's truth.
 */
afterAll(() => tmp.cleanup());

const ended2 = (s: FakeCallsService): FakeCall[] => s.calls.filter((c) => c.status === 'ended' && c.participants.filter((p) => p.isJoined).length >= 2);

const blip = (minutes: number) => (s: FakeCallsService): void => ended2(s).forEach((c, i) => {
  if (i % 5 !== 0) return;
  const p = c.participants[0]!;
  // the device dropped and rejoined within the same second: two sessions, both joinedAt T
  const k = c.type === 'audio' ? 'totalAudioMinutes' : 'totalVideoMinutes';
  c.participants.push({ ...p, leftAt: p.joinedAt!, totalAudioMinutes: 0, totalVideoMinutes: 0, [k]: minutes, totalDuration: minutes });
  (c as Wire)[k] = (c[k] as number) + minutes;
  c.totalDurationInMinutes = (c.totalDurationInMinutes as number) + minutes;
  c.totalParticipants = c.participants.length;
});


describe('calls drawn again, invitees, same-second rejoins and recording files: exact, and never partial for nothing', () => {
  const okExact = (ns: Night[]): void => expect(ns.map((n) => ({ night: n.night, status: n.status, wrong: n.wrong }))).toEqual(ns.map((n) => ({ night: n.night, status: 'ok', wrong: 0 })));
  it('F1 device rejoining within the same second (two sessions, same joinedAt): ok and exact every night', async () => {
    okExact(await nights('f1', { seed: 641 }, { n: 4, setup: blip(0.4 / 60) }));
  });
  it('F1b same, list entries without participant state: ok and exact', async () => {
    okExact(await nights('f1b', { seed: 641, listEntry: (w) => ({ ...w, participants: (w.participants as Wire[]).map(({ state: _s, ...p }) => p) }) }, { n: 2, setup: blip(0.4 / 60) }));
  });
  it('F2 invitees carrying joinedAt 0, one rung twice (leftAt 0 / absent): ok and exact', async () => {
    okExact(await nights('f2', { seed: 632 }, {
      n: 4,
      setup: (s) => s.calls.forEach((c, i) => {
        for (const p of c.participants) if (!p.isJoined) p.joinedAt = 0;
        if (i % 4 !== 0) return;
        const inv = c.participants.find((p) => !p.isJoined);
        if (!inv) return;
        inv.leftAt = 0; inv.state = 'rejected';
        const again: Wire = { ...inv, state: 'unanswered' }; delete again.leftAt;
        c.participants.push(again as unknown as FakeCall['participants'][number]);
        c.totalParticipants = c.participants.length;
      }),
    }));
  });
  it('F3 recordings retention (deleted on calls older than 3 days): a drawn audit stores what Get Call says, retry list does not grow', async () => {
    const ns = await nights('f3', { seed: 653, recordings: { every: 3, listed: 'all' } }, {
      n: 6,
      between: (s) => { const cut = Math.floor(Date.now() / 1000) - 3 * 86400; for (const c of s.calls) if (c.hasRecording && c.initiatedAt < cut) { c.hasRecording = false; delete c.recordings; } },
    });
    expect(ns.slice(2).map((n) => n.status)).not.toEqual(ns.slice(2).map(() => 'partial'));
    expect(ns[5]!.retries).toBeLessThanOrEqual(ns[2]!.retries);
  });
  it('F5 SDK recordingUrl, hasRecording false stated: re-listed calls lose the deleted recording (pre-existing)', async () => {
    const sdk = (w: Wire): Wire => { const o = { ...w }; if (Array.isArray(o.recordings) && o.recordings.length) o.recordingUrl = (o.recordings as Wire[])[0]!.recording_url; delete o.recordings; return o; };
    const ns = await nights('f5', { seed: 638, recordings: { every: 3, listed: 'all' }, getAnswer: sdk, listEntry: sdk }, {
      n: 2, extra: { detailFetch: 'always' },
      setup: (s) => { for (const c of s.calls) if (Array.isArray(c.recordings)) c.recordings = c.recordings.slice(0, 1); },
      between: (s, night) => { if (night === 1) for (const c of s.calls) if (c.hasRecording) { c.hasRecording = false; delete c.recordings; } },
    });
    expect(ns[1]!.recentWrong).toBe(0);
  });
  it('F6 two recordings with the same rid and times, different files (.mp4, .m4a): both stored', async () => {
    okExact(await nights('f6', { seed: 639, recordings: { every: 3, listed: 'all' } }, {
      n: 1, extra: { detailFetch: 'always' },
      setup: (s) => { for (const c of s.calls) if (Array.isArray(c.recordings)) { const r = (c.recordings as Wire[])[0]!; c.recordings = [r, { ...r, recording_url: String(r.recording_url).replace('.mp4', '.m4a') }]; } },
    }));
  });
  it('F7 (borderline) Get Call refusing 3% of calls with ERR_CALL_ACCESS_RESTRICTED, their entries whole: not partial every night', async () => {
    const ns = await nights('f7', { seed: 636 }, { n: 5, setup: (s) => s.calls.forEach((c, i) => { if (i % 33 === 0) s.getForbidden.add(c.sessionId); }) });
    expect(ns.slice(1).map((n) => n.status)).not.toEqual(ns.slice(1).map(() => 'partial'));
  });
});

// helper-63 F4 (session 29; a known gap until session 30): a server that omits `hasRecording` when
// false (Go's omitempty) and deletes recordings: an answer without hasRecording and recordings said
// nothing of them, and the stored ones were kept (ok, 150 rows wrong, also with always and --full).
// Silence now reads as "none" once the run has seen the service state only `true` (MediaStatements);
// with every recording deleted it has stated nothing, and the run says so (partial), never ok.
describe('media an answer leaves unsaid (omitempty)', () => {
  const omitempty = (w: Wire): Wire => { const o = { ...w }; if (o.hasRecording === false) delete o.hasRecording; return o; };
  const deleteRecordings = (which: (i: number) => boolean) => (s: FakeCallsService, night: number): void => {
    if (night !== 1) return;
    s.calls.filter((c) => c.hasRecording).forEach((c, i) => { if (which(i)) { c.hasRecording = false; delete c.recordings; } });
  };
  it('some recordings deleted: the full sync drops them, ok and exact', async () => {
    const ns = await nights('f4-some', { seed: 634, recordings: { every: 3, listed: 'all' }, getAnswer: omitempty, listEntry: omitempty }, {
      n: 3, extra: { detailFetch: 'always' }, full: (n) => n >= 2, between: deleteRecordings((i) => i % 2 === 0),
    });
    expect({ status: ns[2]!.status, wrong: ns[2]!.wrong, first: ns[2]!.firstWrong }).toEqual({ status: 'ok', wrong: 0, first: undefined }); // night 2 is sync --full
  });
  it('the same in auto mode', async () => {
    const ns = await nights('f4-some-auto', { seed: 635, recordings: { every: 3, listed: 'all' }, getAnswer: omitempty, listEntry: omitempty }, {
      n: 3, full: (n) => n >= 2, between: deleteRecordings((i) => i % 3 !== 1),
    });
    expect({ status: ns[2]!.status, wrong: ns[2]!.wrong, first: ns[2]!.firstWrong }).toEqual({ status: 'ok', wrong: 0, first: undefined });
  });
  it('silence read as none, then the service states hasRecording false after all: partial, never ok', async () => {
    // Night 0: no answer states a false hasRecording (omitempty). From night 1 Get Call states it,
    // except for the newest 50 calls (the first page, newest first, whose Gets are answered first):
    // a recording deleted on the first page is read as gone before the first `false` is seen.
    let newest: Set<string> | undefined;
    const someOmit = (w: Wire, c: FakeCall): Wire => (newest === undefined || newest.has(c.sessionId) ? omitempty(w) : w);
    const ns = await nights('f4-mixed', { seed: 637, recordings: { every: 3, listed: 'all' }, getAnswer: someOmit, listEntry: omitempty }, {
      n: 2, extra: { detailFetch: 'always' },
      between: (s, night) => {
        newest = new Set([...s.calls].sort((a, b) => b.initiatedAt - a.initiatedAt).slice(0, 50).map((c) => c.sessionId));
        if (night === 1) s.calls.filter((c) => newest!.has(c.sessionId) && c.hasRecording).slice(0, 2).forEach((c) => { c.hasRecording = false; delete c.recordings; });
      },
    });
    expect(ns[0]!.status).toBe('ok');
    // Night 1 lists the first page anew (incremental): the two calls are read there, by the list's
    // silence (it leaves false out) as none, or the run says it cannot tell. Never ok and wrong.
    if (ns[1]!.status === 'ok') expect(ns[1]!.wrong).toBe(0);
    else expect(ns[1]!.error).toMatch(/taken to have no recordings .* then it stated `hasRecording: false`|lack details|asked for again/);
  });
  it('entries without media, recordings of recent calls deleted: the settle audit finds the change, and every recent call is asked again', async () => {
    // List entries carry no media (each call was fetched once); only the audits that ask Get Call
    // again (8 a run) can see a deletion, and the answer leaves hasRecording out. A deletion the
    // audit reads is a change of details: every call within settleDays is asked again, so all ten
    // are gone from the night an audit first draws one of them on (sampled alone, most would
    // remain). The draws are random: a night's 8 of 60 miss all ten about one time in five, so
    // "gone by night 3" failed about one run in twenty (a clean-clone CI, session 31); ten nights
    // of draws all missing is a chance of about 2·10⁻⁷.
    const ns = await nights('f4-settle', { seed: 638, calls: 60, spanHours: 2, listMinimal: true, recordings: { every: 2, listed: 'none' }, getAnswer: omitempty }, {
      n: 12, between: (s, night) => { if (night === 1) s.calls.filter((x) => x.hasRecording).slice(0, 10).forEach((c) => { c.hasRecording = false; delete c.recordings; }); },
    });
    expect(ns.map((n) => n.status)).toEqual(ns.map(() => 'ok'));
    // Once found, every recent call is asked again: exact from then on, every night.
    const exactFrom = ns.findIndex((n, i) => i >= 2 && n.wrong === 0);
    expect(exactFrom, JSON.stringify(ns.map((n) => n.wrong))).toBeGreaterThanOrEqual(2);
    expect(ns.slice(exactFrom).map((n) => ({ wrong: n.wrong, first: n.firstWrong }))).toEqual(ns.slice(exactFrom).map(() => ({ wrong: 0, first: undefined })));
  });
  it('every recording deleted: the answers earlier runs stored show the service leaves false out, ok and exact', async () => {
    const ns = await nights('f4-all', { seed: 634, recordings: { every: 3, listed: 'all' }, getAnswer: omitempty, listEntry: omitempty }, {
      n: 3, extra: { detailFetch: 'always' }, full: (n) => n >= 2, between: deleteRecordings(() => true),
    });
    expect({ status: ns[2]!.status, wrong: ns[2]!.wrong, first: ns[2]!.firstWrong }).toEqual({ status: 'ok', wrong: 0, first: undefined });
  });
  it('a service that states media only by the list\'s recordings (no hasRecording anywhere, Get Call without media), one call\'s deleted: the list\'s silence says none, ok and exact', async () => {
    const noFlag = (w: Wire): Wire => { const o = { ...w }; delete o.hasRecording; return o; };
    const noMedia = (w: Wire): Wire => { const o = noFlag(w); delete o.recordings; return o; };
    const ns = await nights('f4-never', { seed: 634, recordings: { every: 3, listed: 'all' }, getAnswer: noMedia, listEntry: noFlag }, {
      n: 4, extra: { detailFetch: 'always' }, full: (n) => n === 2, between: deleteRecordings((i) => i === 0),
    });
    // Night 1 is incremental: an older call's change waits for the full listing (README, step 5).
    expect({ status: ns[2]!.status, wrong: ns[2]!.wrong }).toEqual({ status: 'ok', wrong: 0 }); // night 2 is sync --full
    expect({ status: ns[3]!.status, wrong: ns[3]!.wrong }).toEqual({ status: 'ok', wrong: 0 });
  });
  it('nothing states media at all (no flag, no list recordings, Get Call without media) after it did: not ok with them kept', async () => {
    let bare = false;
    const noMedia = (w: Wire): Wire => { if (!bare) return w; const o = { ...w }; delete o.hasRecording; delete o.recordings; return o; };
    const ns = await nights('f4-mute', { seed: 634, recordings: { every: 3, listed: 'all' }, getAnswer: noMedia, listEntry: noMedia }, {
      n: 3, extra: { detailFetch: 'always' }, full: (n) => n >= 2, between: (s, night) => { bare = true; deleteRecordings((i) => i === 0)(s, night); },
    });
    expect(ns[0]!.status).toBe('ok');
    for (const n of ns) if (n.status === 'ok') expect(n.wrong).toBe(0);
  });
});
