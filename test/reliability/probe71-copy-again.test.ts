import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

const postgres = (await testDialects()).includes('postgres');

/**
 * `callsync copy` may be run again ("rows of the file replace newer ones synced into the target
 * since"): a user copies, keeps syncing the SQLite file a few nights, copies again and switches. The
 * copy upserted by key and deleted nothing, so what the file no longer holds stayed in PostgreSQL:
 * members who had left the group (group_members beside a synced_groups.members that no longer
 * counted them), recordings the service had deleted and participant rows of a call restated with
 * fewer (its minutes counted twice per user in every view over participants), exit 0 (probe71).
 */
describe.runIf(postgres)('probe71: copy run again after the file changed', () => {
  const tmp = tempDir('callsync-probe71-copy-');
  const dbs = databaseFactory('postgres', tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('the target ends with exactly the rows of the file: members who left, deleted recordings and a participant fewer are gone', async () => {
    const service = await FakeCallsService.start({ calls: 60, ongoing: 0, seed: 7101, spanHours: 20, groups: 2, recordings: { every: 3, listed: 'all' } });
    try {
      const file = join(tmp.dir, 'source.db');
      const settings = settingsAt(service.baseUrls('app1'), file, { detailFetch: 'always', pageSize: 50, concurrency: 4 });
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      const url = await dbs.fresh('copy-again');
      const first = await runCli(['copy', '--from', file, '--to', url]);
      expect(first.code, first.stderr).toBe(0);

      // At the service: members leave each group, and one call's second recording is deleted.
      for (const [, uids] of service.members) uids.splice(3, 5);
      const recorded = service.calls.find((c) => Array.isArray(c.recordings) && c.recordings.length === 2)!;
      (recorded.recordings as unknown[]).pop();
      // And one call is restated with a participant fewer (its list entry changes, its rows are replaced).
      const crowded = service.calls.find((c) => c.status === 'ended' && c.participants.length >= 3)!;
      crowded.participants.pop();
      const next = (await syncWith(settings, { full: true })).results[0]!;
      expect(next.status, next.error).toBe('ok');

      const again = await runCli(['copy', '--from', file, '--to', url]);
      expect(again.code, again.stderr).toBe(0);

      const members = (db: string) => withStore(db, async ({ db: k }) => (await k.selectFrom('group_members').select(['app_id', 'guid', 'uid']).execute()).map((r) => `${r.app_id}/${r.guid}/${r.uid}`).sort());
      const recordings = (db: string) => withStore(db, async ({ db: k }) => (await k.selectFrom('call_recordings').select(['session_id', 'rid']).execute()).map((r) => `${r.session_id}/${r.rid}`).sort());
      const counted = (db: string) => withStore(db, async ({ db: k }) => (await k.selectFrom('synced_groups').select(['guid', 'members']).orderBy('guid').execute()).map((r) => `${r.guid}:${Number(r.members)}`));
      const truth = [...service.members].flatMap(([guid, uids]) => uids.map((u) => `app1/${guid}/${u}`)).sort();
      expect(await members(file)).toEqual(truth);
      expect(await members(url)).toEqual(truth);
      expect(await recordings(url)).toEqual(await recordings(file));
      expect(await recordings(url)).not.toContain(`${recorded.sessionId}/${recorded.sessionId}-r1`);
      expect(await counted(url)).toEqual(await counted(file));
      const participants = (db: string) => withStore(db, async ({ db: k }) => (await k.selectFrom('call_participants').select(['session_id', 'seq', 'uid', 'total_duration_minutes']).execute()).map((r) => `${r.session_id}/${r.seq}/${r.uid}/${r.total_duration_minutes}`).sort());
      expect((await participants(file)).filter((p) => p.startsWith(crowded.sessionId))).toHaveLength(crowded.participants.length);
      expect(await participants(url)).toEqual(await participants(file));
    } finally {
      await service.close();
    }
  });

  /**
   * Rows copied by their natural key (rejected records, sync runs) were copied once and never again:
   * a rejected list entry the service stopped listing gets `unlisted_at` in the file after a full
   * listing, and no longer counts as a call the service holds in the incremental proof; copied
   * again, PostgreSQL kept it counted (unlisted_at null), one phantom call in the proof's count,
   * which balances a call the database lacks (probe71).
   */
  it('a row the file updated since the first copy (a rejected entry no longer listed) is updated in the target', async () => {
    const service = await FakeCallsService.start({ calls: 40, ongoing: 0, seed: 7102, spanHours: 20, malformedAfterNewest: true });
    try {
      const file = join(tmp.dir, 'source-rejected.db');
      const settings = settingsAt(service.baseUrls('app1'), file, { detailFetch: 'always', pageSize: 50, concurrency: 4 });
      expect((await syncWith(settings)).results[0]!.status).toBe('partial');
      const url = await dbs.fresh('copy-again-rejected');
      expect((await runCli(['copy', '--from', file, '--to', url])).code).toBe(0);
      service.opts.malformedAfterNewest = false;
      const next = (await syncWith(settings, { full: true })).results[0]!;
      expect(next.status, next.error).toBe('ok');
      const again = await runCli(['copy', '--from', file, '--to', url]);
      expect(again.code, again.stderr).toBe(0);
      const rejected = (db: string) => withStore(db, async ({ db: k }) => (await k.selectFrom('rejected_records').select(['endpoint', 'record_key', 'fingerprint', 'unlisted_at']).execute()).map((r) => `${r.endpoint}/${r.record_key}/${r.fingerprint}/${r.unlisted_at === null ? 'listed' : 'unlisted'}`).sort());
      const inFile = await rejected(file);
      expect(inFile.some((r) => r.endsWith('/unlisted'))).toBe(true);
      expect(await rejected(url)).toEqual(inFile);
      const runs = (db: string) => withStore(db, async ({ db: k }) => (await k.selectFrom('sync_runs').select(['run_id', 'status']).execute()).map((r) => `${r.run_id}/${r.status}`).sort());
      expect(await runs(url)).toEqual(await runs(file));
    } finally {
      await service.close();
    }
  });
});
