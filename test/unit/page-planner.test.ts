import { describe, expect, it } from 'vitest';
import { parseListPage, planPage, type PlanContext } from '../../src/sync/page-planner.js';
import { RecentCalls } from '../../src/sync/recent-calls.js';
import { WatermarkTracker } from '../../src/sync/watermark.js';
import { parseCall } from '../../src/transform/call-rows.js';

const participant = { uid: 'u1', totalAudioMinutes: 1, totalVideoMinutes: 0, totalDuration: 1, isJoined: true };
function entry(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sessionId: id, type: 'audio', mode: 'call', receiverType: 'user', receiver: 'u2', initiator: 'u1', hasRecording: false, status: 'ended', startedAt: 1_700_000_000, endedAt: 1_700_000_060, totalParticipants: 1,
    totalAudioMinutes: 1, totalVideoMinutes: 0, totalDurationInMinutes: 1, participants: [participant], ...over,
  };
}
function ctx(over: Partial<PlanContext> = {}): PlanContext {
  return { appId: 'a', region: 'us', now: 1_800_000_000, detailFetch: 'auto', stored: new Map(), recent: new RecentCalls(100), liveBefore: new Set(), ...over };
}

describe('page planner', () => {
  it('stores whole entries from the list, fetches the rest, rejects the unreadable', () => {
    const { valid, invalid } = parseListPage([entry('a'), entry('b', { participants: undefined }), { type: 'audio' }, entry('c', { status: 'ongoing' })], 1);
    expect(invalid.map((i) => i.key)).toEqual(['list:page1#2']);
    const plan = planPage(valid, ctx());
    expect(plan.listRows.map((r) => r.call.session_id)).toEqual(['a']);
    expect(plan.pending.map((p) => p.call.sessionId)).toEqual(['b', 'c']);
    expect(plan.live).toEqual(['c']);
    expect(plan.newlySeen).toBe(3);
  });
  it('skips an entry unchanged since it was stored, and one already handled in this run', () => {
    const { valid } = parseListPage([entry('a'), entry('b')], 1);
    const c = ctx({ stored: new Map([['a', { listFingerprint: valid[0]!.fp, isFinal: true, notFound: false }]]) });
    expect(planPage(valid, c).listRows.map((r) => r.call.session_id)).toEqual(['b']);
    const again = planPage(valid, c);
    expect([again.listRows.length, again.pending.length, again.newlySeen]).toEqual([0, 0, 0]);
  });
  it('a summary entry (participants without their minutes) is fetched; a call listed twice with different entries goes to Get Call, once, its earlier entry on the page dropped', () => {
    const { valid } = parseListPage([entry('a', { participants: [{ uid: 'u1', isJoined: true }] }), entry('b'), entry('b', { participants: [{ ...participant, uid: 'u2' }] })], 1);
    const plan = planPage(valid, ctx());
    expect(plan.listRows.map((r) => r.call.session_id)).toEqual([]);
    expect(plan.pending.map((p) => [p.call.sessionId, p.relisted ?? false])).toEqual([['a', false], ['b', true]]);
  });
  it('--refetch sends even unchanged entries to Get Call', () => {
    const { valid } = parseListPage([entry('a')], 1);
    const stored = new Map([['a', { listFingerprint: valid[0]!.fp, isFinal: true, notFound: false }]]);
    expect(planPage(valid, ctx({ stored, refetch: true })).pending.map((p) => p.call.sessionId)).toEqual(['a']);
  });
  it('detailFetch always fetches every new entry; a backfill window leaves others alone', () => {
    const { valid } = parseListPage([entry('a'), entry('b', { startedAt: 1_600_000_000 })], 1);
    const plan = planPage(valid, ctx({ detailFetch: 'always', window: { since: 1_650_000_000 } }));
    expect(plan.pending.map((p) => p.call.sessionId)).toEqual(['a']);
  });
  it('a call that never started has no start time (never 1970)', () => {
    const { valid } = parseListPage([entry('a', { status: 'unanswered', startedAt: 0, initiatedAt: 1_700_000_000 }), entry('b', { startedAt: -5 })], 1);
    expect(valid.map((v) => v.call.startedAt)).toEqual([null, null]);
    expect(valid[0]!.time).toBe(1_700_000_000);
  });
});

describe('watermark', () => {
  it('moves to the newest start, never to one beyond now + skew', () => {
    const w = new WatermarkTracker(100, 1_000, 60);
    const call = (id: string, startedAt: number) => {
      const p = parseCall(entry(id, { startedAt }), id);
      if (!p.ok) throw new Error(p.reason);
      return p.call;
    };
    w.see(call('a', 900));
    w.see(call('b', 50_000));
    w.see(call('c', 1_050));
    expect(w.value).toBe(1_050);
    expect(w.future).toEqual([{ sessionId: 'b', startedAt: 50_000 }]);
  });
});
