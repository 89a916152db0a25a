import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';

/**
 * probe65: incremental runs after a run that was `partial`. The partial run's line promises the
 * next run reads again what it could not prove; an incremental run lists only its window.
 */
const tmp = tempDir('callsync-probe65-partial-');
afterAll(() => tmp.cleanup());
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 1, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;
const NOW = (): number => Math.floor(Date.now() / 1000);

describe('probe65: the ok run after a partial one covers what the partial one missed', () => {
  // F2: a group whose members could not be synced (partial: "their stored members were kept,
  // retried on the next run") is synced again only when the next run's window lists one of its
  // calls. An incremental run whose window holds no call to that group ends ok with the group's
  // members never stored.
  it('a group whose members failed in a partial run is synced by the next run, or that run is not ok', async () => {
    const service = await FakeCallsService.start({ calls: 400, ongoing: 0, seed: 6502, spanHours: 144, groups: 30 });
    // The group whose newest call is oldest: no call of it lies in the next run's window.
    const newestByGroup = new Map<string, number>();
    for (const c of service.calls) if (c.receiverType === 'group') newestByGroup.set(c.receiver, Math.max(newestByGroup.get(c.receiver) ?? 0, c.initiatedAt));
    const [guid, newest] = [...newestByGroup].sort((a, b) => a[1] - b[1])[0]!;
    expect(newest).toBeLessThan(NOW() - 4 * 3600);
    service.membersForbidden.add(guid);
    const database = join(tmp.dir, 'groups.db');
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status).toBe('partial');
      expect(first.error).toContain(guid);

      // The refusal is lifted (the key's user joined the group, a deploy ended); a new 1:1 call arrives.
      service.membersForbidden.delete(guid);
      service.addCall({ at: NOW() - 120, status: 'ended' });
      const second = (await syncWith(settings)).results[0]!;
      expect(second.mode).toBe('incremental');
      const stored = await withStore(database, async ({ db }) => (await db.selectFrom('group_members').select('uid').where('guid', '=', guid).execute()).length);
      const truth = service.members.get(guid)!.length;
      if (second.status === 'ok') expect({ status: second.status, guid, stored }).toEqual({ status: 'ok', guid, stored: truth });
      else expect(second.status).toBe('partial');
    } finally {
      await service.close();
    }
  });

  // F3: a list entry without a sessionId makes every run partial while it is listed, and is kept in
  // rejected_records, where the incremental window proof counts it as a call the database holds
  // (countRejectedListedOnly) for good. Once the service stops listing it, that count is one above
  // what the service holds, and a call indexed late (its time before the window) is hidden by it:
  // ok, the call missing, after each full listing too.
  it('an unreadable entry the service no longer lists does not hide a late call from the next runs', async () => {
    const service = await FakeCallsService.start({ calls: 400, ongoing: 0, seed: 6503, spanHours: 144, malformedAfterNewest: true } satisfies FakeOptions);
    const database = join(tmp.dir, 'rejected.db');
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status).toBe('partial');
      expect(first.unreadCalls).toBe(1);
      // The service removes the broken entry (or writes it as a call it already lists).
      (service.opts as FakeOptions).malformedAfterNewest = false;
      const clean = (await syncWith(settings)).results[0]!;
      expect(clean.status).toBe('ok');
      expect(await callsVsTruth(service, database)).toEqual([]);
      // A full listing proves everything and marks what the service no longer lists.
      expect((await syncWith(settings, { full: true })).results[0]!.status).toBe('ok');

      // A call indexed late: its time is 100 hours back, before the window (lookback 1 h).
      service.addCall({ at: NOW() - 100 * 3600, status: 'ended' });
      service.addCall({ at: NOW() - 60, status: 'ended' });
      const next = (await syncWith(settings)).results[0]!;
      expect(next.mode).toBe('incremental');
      const missing = (await callsVsTruth(service, database)).filter((l) => l.endsWith('not stored'));
      if (next.status === 'ok') expect({ status: next.status, missing }).toEqual({ status: 'ok', missing: [] });
      else expect(next.status).toBe('partial');
    } finally {
      await service.close();
    }
  });
});
