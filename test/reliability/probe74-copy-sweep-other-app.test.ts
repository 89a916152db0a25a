import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

const postgres = (await testDialects()).includes('postgres');

/**
 * probe74: the sweep of a copy run again pages the target's participant rows by their own key and
 * keeps those of the file's apps (paged joined to `calls`, each page was a merge join from the first
 * call: a second copy of 100k calls had not ended after 8 minutes). Here the target also holds
 * another app, synced into PostgreSQL alone, with the same session ids and call_ids interleaved with
 * the copied ones: its rows stay as they were, the file's app ends with exactly the file's rows.
 */
describe.runIf(postgres)('probe74: copy run again beside another app', () => {
  const tmp = tempDir('callsync-probe74-copy-');
  const dbs = databaseFactory('postgres', tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  it("another app's participant rows stay; the file's app loses the participant the file lost", async () => {
    const service = await FakeCallsService.start({ calls: 60, ongoing: 0, seed: 7401, spanHours: 20 });
    try {
      const file = join(tmp.dir, 'source.db');
      const url = await dbs.fresh('copy-other-app');
      const fileSettings = settingsAt(service.baseUrls('app1'), file, { detailFetch: 'always', pageSize: 50, concurrency: 4 });
      const otherSettings = settingsAt(service.baseUrls('app2'), url, { detailFetch: 'always', pageSize: 50, concurrency: 4 }, { appId: 'app2' });
      expect((await syncWith(otherSettings)).results[0]!.status).toBe('ok');
      expect((await syncWith(fileSettings)).results[0]!.status).toBe('ok');
      expect((await runCli(['copy', '--from', file, '--to', url])).code).toBe(0);
      // Synced into PostgreSQL again after the copy: its call_ids now follow the copied app's.
      expect((await syncWith(otherSettings, { full: true })).results[0]!.status).toBe('ok');

      const participants = (db: string, app: string) =>
        withStore(db, async ({ db: k }) => (await k.selectFrom('call_participants').select(['session_id', 'seq', 'uid']).where('app_id', '=', app).execute()).map((r) => `${r.session_id}/${r.seq}/${r.uid}`).sort());
      const otherBefore = await participants(url, 'app2');
      expect(otherBefore.length).toBeGreaterThan(0);

      const crowded = service.calls.find((c) => c.status === 'ended' && c.participants.length >= 3)!;
      crowded.participants.pop();
      expect((await syncWith(fileSettings, { full: true })).results[0]!.status).toBe('ok');
      const again = await runCli(['copy', '--from', file, '--to', url]);
      expect(again.code, again.stderr).toBe(0);

      expect(await participants(url, 'app1')).toEqual(await participants(file, 'app1'));
      expect((await participants(url, 'app1')).filter((p) => p.startsWith(`${crowded.sessionId}/`))).toHaveLength(crowded.participants.length);
      expect(await participants(url, 'app2')).toEqual(otherBefore);
    } finally {
      await service.close();
    }
  }, 120_000);
});
