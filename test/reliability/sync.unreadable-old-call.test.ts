import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * A call neither List Calls nor Get Call gives in a form that parses, older than the next runs'
 * incremental window (hostile probe, session 24). The first (full) run was partial and put it on
 * the retry list; the later runs asked Get Call again, still got nothing usable, and said ok: the
 * partial line needed an unreadable entry on this run's own pages, which the window no longer
 * reached. The call stayed missing from `calls` with every run ok.
 */
const HOUR = 3600;
const NOW = (): number => Math.floor(Date.now() / 1000);
const tmp = tempDir('callsync-unreadable-old-');
afterAll(() => tmp.cleanup());

describe('a call nothing can read, older than the incremental window', () => {
  it('every run is partial, naming it, until the service writes it readably; then it is stored and the run ok', async () => {
    let victim = '';
    let readable = false;
    // `status: 3`: a number where the schema takes text, in the entry and in Get Call's answer.
    const spoil = (w: Wire): Wire => (w.sessionId === victim && !readable ? { ...w, status: 3 } : w);
    const service = await FakeCallsService.start({ seed: 5, calls: 100, ongoing: 0, spanHours: 48, listEntry: spoil, getAnswer: spoil });
    try {
      victim = service.calls.find((c) => c.initiatedAt < NOW() - 24 * HOUR)!.sessionId;
      const database = join(tmp.dir, 'unreadable-old.db');
      const settings = settingsAt(service.baseUrls('app1'), database, { pageSize: 20, detailFetch: 'auto', lookbackHours: 2, concurrency: 4, maxAttempts: 2, requestTimeoutMs: 2_000 });
      const stored = async (): Promise<boolean> =>
        (await withStore(database, ({ db }) => db.selectFrom('calls').select('session_id').where('session_id', '=', victim).execute())).length === 1;

      for (let run = 0; run < 3; run++) {
        service.addCall({ at: NOW() - 60, status: 'ended' });
        const r = (await syncWith(settings)).results[0]!;
        expect(r.mode).toBe(run === 0 ? 'full' : 'incremental');
        expect(r.status, `run ${run + 1}: ${r.error ?? ''}`).toBe('partial');
        expect(r.unreadCalls).toBe(1);
        expect(r.error).toContain(`1 listed call(s) could be read neither from List Calls nor from Get Call (first: ${victim}`);
        expect(await stored()).toBe(false);
      }

      readable = true;
      const last = (await syncWith(settings)).results[0]!;
      expect(last.mode).toBe('incremental');
      expect(last.status, last.error).toBe('ok');
      expect(await stored()).toBe(true);
    } finally {
      await service.close();
    }
  });
});
