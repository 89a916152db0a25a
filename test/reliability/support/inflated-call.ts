import { expect } from 'vitest';
import { syncWith } from '../../helpers/harness.js';
import { FakeCallsService, type FakeCall } from './fake-calls-service.js';
import { settingsAt } from './matrix.js';

/** Minutes one participant is stated with: more than any call can hold, so the call is flagged. */
export const ABSURD = 50_000;

export interface InflatedCall {
  service: FakeCallsService;
  /** The ended call one joined participant of which is stated with ABSURD minutes. */
  call: FakeCall;
  uid: string;
}

/**
 * A fake service of 40 calls over 2 hours where one ended call (`pick`, among those with two or
 * more joined participants) states one joined participant with ABSURD minutes, in its list entry and
 * in Get Call's answer; synced into `database` (detailFetch always), the run ok. The caller closes
 * `service`. probe64 (the report) and probe68 (reconcile) read it.
 */
export async function syncedWithInflatedCall(seed: number, database: string, pick: (ended: FakeCall[]) => FakeCall): Promise<InflatedCall> {
  let target = '';
  let uid = '';
  const inflate = (w: Record<string, unknown>): Record<string, unknown> => {
    if (w.sessionId !== target) return w;
    const ps = (w.participants as Record<string, unknown>[]).map((p) => (p.uid === uid ? { ...p, totalDuration: ABSURD, totalAudioMinutes: w.type === 'audio' ? ABSURD : 0, totalVideoMinutes: w.type === 'video' ? ABSURD : 0 } : p));
    return { ...w, participants: ps };
  };
  const service = await FakeCallsService.start({ seed, calls: 40, ongoing: 0, spanHours: 2, listEntry: inflate, getAnswer: inflate });
  try {
    const call = pick(service.calls.filter((c) => c.status === 'ended' && c.participants.filter((p) => p.isJoined).length >= 2));
    target = call.sessionId;
    uid = call.participants.find((p) => p.isJoined)!.uid;
    expect((await syncWith(settingsAt(service.baseUrls(), database, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
    return { service, call, uid };
  } catch (err) {
    await service.close();
    throw err;
  }
}
