import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { differsSetting } from '../../src/sync/list-audit.js';
import { FakeCallsService, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';

/**
 * probe65 F1: a run stopped by SIGINT/SIGTERM (the CLI's abort signal) after its audits found that
 * list entries differ from Get Call, but before the finding was saved (audit.save runs after the
 * listing, and an aborted run throws before it). The calls the run stored from their entries stay
 * as listed; the next run finds every entry unchanged (same fingerprint: no audit, no Get), its
 * drawn audits skip calls written within the hour, and it ends ok with the entries' wrong data.
 */
const tmp = tempDir('callsync-probe65-audit-');
afterAll(() => tmp.cleanup());

describe('probe65: a run interrupted after its audits found that entries differ', () => {
  it('the next run is not ok while calls stored from those entries still hold what the entries said', async () => {
    const controller = new AbortController();
    const service = await FakeCallsService.start({
      calls: 40, ongoing: 0, seed: 6501,
      // Entries leave each participant's device out (Get Call states it): they look whole.
      listEntry: (e) => ({ ...e, participants: (e.participants as Wire[]).map(({ deviceId: _d, ...p }) => p) }),
    });
    const database = join(tmp.dir, 'audit.db');
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, { pageSize: 50, detailFetch: 'auto', concurrency: 2, maxAttempts: 3 });
      // SIGTERM lands once the listing's last page is written (its audits answered, the finding made),
      // before the run goes on to save what its audits found.
      const first = await syncWith(settings, { signal: controller.signal, onProgress: () => { controller.abort(new Error('received SIGTERM')); } });
      expect(first.results[0]!.status).toBe('interrupted');
      const storedFromList = await withStore(database, async ({ db }) => (await db.selectFrom('calls').select('session_id').where('details_source', '=', 'list').execute()).length);
      // The interrupted run did write calls from their (wrong) entries.
      expect(storedFromList).toBeGreaterThan(0);
      const wrong = await callsVsTruth(service, database);
      expect(wrong.length).toBeGreaterThan(0);

      const second = await syncWith(settings);
      const r = second.results[0]!;
      const still = await callsVsTruth(service, database);
      const saved = await withStore(database, async ({ db }) => (await db.selectFrom('callsync_settings').select('value').where('key', '=', differsSetting('app1', 'us')).executeTakeFirst())?.value);
      // The rule: ok only with exactly what the service holds.
      if (r.status === 'ok') expect({ status: r.status, wrongCalls: still.length, first: still[0], finding: saved }).toEqual({ status: 'ok', wrongCalls: 0, first: undefined, finding: saved });
      else expect(r.status).toBe('partial');
    } finally {
      await service.close();
    }
  });
});
