import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { settingsAt } from './support/matrix.js';
import { receiverCall, startReceiverTypeService } from './support/receiver-type-service.js';
import { viaProxy, type TestServer } from './support/servers.js';

/**
 * probe70: since 425e780 a call whose `receiverType` is `GROUP` or ` Group` has its group's members
 * synced, but the value was stored as sent, and what reads group calls matches `group` exactly: the
 * report's "Top groups" and the documented view `group_call_attendance` left those calls out
 * (2 of the 3 group calls below), exit 0, their members synced for nothing. The value is now
 * stored as `group` (or `user`) whatever its case or spaces (the payload keeps it as sent), and
 * a migration brings rows stored before to that form.
 */
const APP = 'app1';
const NOW = Math.floor(Date.now() / 1000);

const MEMBERS: Record<string, string[]> = { 'g-upper': ['u1', 'u2', 'm3'], 'g-title': ['u1', 'm5'], 'g-plain': ['u2'] };


describe('probe70: group calls whose receiverType is in another case reach the report and group_call_attendance', () => {
  const tmp = tempDir('callsync-probe70-rtype-');
  let server: TestServer;
  const calls = [receiverCall('c-upper', NOW - 3_600, 'GROUP', 'g-upper'), receiverCall('c-title', NOW - 4_200, ' Group', 'g-title'), receiverCall('c-plain', NOW - 4_800, 'group', 'g-plain'), receiverCall('c-user', NOW - 5_400, 'USER', 'u2')];

  beforeAll(async () => {
    server = await startReceiverTypeService(calls, MEMBERS);
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('on every dialect: the view has the three group calls, the report ranks the three groups', async () => {
    for (const dialect of await testDialects()) {
      const dbs = databaseFactory(dialect, tmp.dir);
      try {
        const db = await dbs.fresh(`rtype_${dialect}`);
        const r = (await syncWith(settingsAt(viaProxy(server.url, APP), db, { detailFetch: 'auto', concurrency: 2 }))).results[0]!;
        expect(r.status, r.error).toBe('ok');
        const attendance = await withStore(db, async ({ db: k }) => (await sql<{ guid: string; joined_members: number | string }>`select guid, joined_members from group_call_attendance order by guid`.execute(k)).rows);
        expect(attendance.map((a) => [a.guid, Number(a.joined_members)]), dialect).toEqual([['g-plain', 1], ['g-title', 1], ['g-upper', 2]]);
        const month = new Date((NOW - 3_600) * 1000).toISOString().slice(0, 7);
        const from = new Date((NOW - 86_400) * 1000).toISOString().slice(0, 10);
        const to = new Date((NOW + 86_400) * 1000).toISOString().slice(0, 10);
        const rep = await runCli(['report', '--database', db, '--from', from, '--to', to, '--out', '-']);
        expect(rep.code, rep.stderr).toBe(0);
        const section = /<section id="top-groups">[\s\S]*?<\/section>/.exec(rep.stdout)?.[0] ?? '';
        for (const g of ['g-upper', 'g-title', 'g-plain']) expect(section, `${dialect} ${month}`).toContain(g);
        // The payload keeps what the service sent.
        const raw = await withStore(db, async ({ db: k }) => (await sql<{ raw_json: string }>`select raw_json from call_payloads where session_id = 'c-upper'`.execute(k)).rows[0]!.raw_json);
        expect(JSON.parse(raw)).toMatchObject({ receiverType: 'GROUP' });

        // A row stored before (as sent), brought to the stored form by the migration; a second sync
        // finds nothing changed in it.
        await withStore(db, async ({ db: k }) => {
          await sql`update calls set receiver_type = ' Group' where session_id = 'c-title'`.execute(k);
          // That migration and every later one (Kysely refuses a gap in the ones applied).
          await sql`delete from kysely_migration where name >= '20261130T040000_receiver_type_form'`.execute(k);
        });
        const migrated = await runCli(['migrate', '--database', db]);
        expect(migrated.code, migrated.stderr).toBe(0);
        const types = await withStore(db, async ({ db: k }) => (await sql<{ session_id: string; receiver_type: string }>`select session_id, receiver_type from calls order by session_id`.execute(k)).rows);
        expect(types.map((t) => [t.session_id, t.receiver_type])).toEqual([['c-plain', 'group'], ['c-title', 'group'], ['c-upper', 'group'], ['c-user', 'user']]);
      } finally {
        await dbs.dropAll();
      }
    }
  }, 120_000);
});
