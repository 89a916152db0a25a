import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';
import { relay, startProxy } from './support/servers.js';

/**
 * probe72 F4: SIGTERM/SIGINT while group members were listed failed each group left with
 * `… not sent: stopping`, and the run was recorded `partial`, the members' failure its error, and
 * saved as the app's last success (its watermark moved): `callsync runs` showed no interruption, and
 * the export's staleness counted the stopped run as a success. It is now `interrupted`, as a signal
 * anywhere else makes it; the next run lists the members whole.
 */
const tmp = tempDir('callsync-probe72-members-signal-');
afterAll(() => tmp.cleanup());

describe('probe72: a signal while group members are listed', () => {
  it('the run is interrupted (not partial, no success recorded), and the next run is ok and exact', async () => {
    const service = await FakeCallsService.start({ calls: 60, ongoing: 0, seed: 7204, members: { cap: 10 } });
    const controller = new AbortController();
    const proxy = await startProxy(service.url, async (req, pass) => {
      // The signal comes with the first members request: the calls are all listed and written by then.
      if (/\/members/.test(req.url) && !controller.signal.aborted) controller.abort(new Error('received SIGTERM'));
      return relay(await pass());
    });
    const db = join(tmp.dir, 'members.db');
    try {
      const settings = settingsAt({ callsBaseUrl: `${proxy.url}/app1.call-us/v3`, chatBaseUrl: `${proxy.url}/app1.api-us/v3` }, db, { pageSize: 25, maxAttempts: 3 });
      const first = (await syncWith(settings, { signal: controller.signal })).results[0]!;
      expect(controller.signal.aborted).toBe(true);
      expect({ status: first.status, error: first.error }).toEqual({ status: 'interrupted', error: 'app app1 (us): interrupted by a signal; pages already fetched were written, the next run resumes' });
      await withStore(db, async ({ db: k }) => {
        const run = await k.selectFrom('sync_runs').select(['status']).orderBy('id', 'desc').executeTakeFirstOrThrow();
        expect(run.status).toBe('interrupted');
        const state = await k.selectFrom('sync_state').select('last_success_at').executeTakeFirst();
        expect(state?.last_success_at ?? null).toBeNull();
      });

      const second = (await syncWith(settings)).results[0]!;
      expect(second.status, second.error).toBe('ok');
      expect(await callsVsTruth(service, db)).toEqual([]);
      const stored = await withStore(db, ({ db: k }) => k.selectFrom('group_members').select(['guid', 'uid']).execute());
      const wanted = [...service.members].flatMap(([guid, uids]) => uids.map((uid) => `${guid}/${uid}`)).sort();
      expect(stored.map((m) => `${m.guid}/${m.uid}`).sort()).toEqual(wanted);
    } finally {
      await proxy.close();
      await service.close();
    }
  });
});
