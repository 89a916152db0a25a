import { Migrator, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { migrateToLatest, migrationProvider } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/schema.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';

const dialects = await testDialects();
const APP = 'app1';
const BEFORE = '20261126T030000_job_engine';
const COLUMNS = ['app_id', 'session_id', 'seq', 'uid', 'device_id', 'total_audio_minutes', 'total_video_minutes', 'total_duration_minutes', 'is_joined', 'joined_at', 'left_at', 'state'];

/** Participants a migration could mangle: nulls, a fraction's digits, non-ASCII, a uid in two calls and two apps. */
const PARTICIPANTS = [
  `('a', 's1', 0, 'u1', 'd1', 2, 0, 2, 1, 1700000000, 1700000120, 'left')`,
  `('a', 's1', 1, 'u2', 'd2', 1.5, 0.25, 1.75, 1, null, null, null)`,
  `('a', 's1', 2, 'u1', '', null, null, null, 0, null, null, 'invited')`,
  `('a', 's2', 0, 'ünï 📞', 'd', 12.916666666666666, 0, 12.916666666666666, 1, 1700000100, 1700000900, 'left')`,
  `('a', 's3', 0, 'u1', 'd1', 3, 3, 6, 1, 1700000200, 1700000380, 'left')`,
  `('a', 's3', 1, 'u3', 'd3', 0, 0, 0, 1, null, null, null)`,
  `('b', 's1', 0, 'u1', 'd1', 4, 0, 4, 1, null, null, 'left')`,
];

async function seedAtBefore(db: Kysely<Database>): Promise<void> {
  const calls: [string, string, string, number][] = [['a', 's1', 'user', 0], ['a', 's2', 'group', 1], ['a', 's3', 'group', 2], ['b', 's1', 'user', 3], ['a', 's4', 'user', 4]];
  for (const [app, id, receiverType, i] of calls) {
    await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, first_synced_at, synced_at, started_at, started_day, started_month, receiver_type, receiver)
      values (${app}, 'us', ${id}, 'audio', 'ended', 1, 0, 'detail', 1, 1, ${1_700_000_000 + i * 86_400 * 20}, '2023-11-14', ${i < 2 ? '2023-11' : '2023-12'}, ${receiverType}, ${receiverType === 'group' ? 'g1' : 'u9'})`.execute(db);
  }
  await sql.raw(`insert into call_participants (${COLUMNS.join(', ')}) values ${PARTICIPANTS.join(', ')}`).execute(db);
  await sql`insert into group_members (app_id, guid, uid, scope, name, synced_at) values ('a', 'g1', 'u1', 'admin', 'One', 1), ('a', 'g1', 'u3', 'participant', 'Three', 1), ('a', 'g1', 'u4', 'moderator', null, 1)`.execute(db);
}

/** What users read: every participant through `call_participants`, and the two views that read them. */
async function snapshot(db: Kysely<Database>): Promise<unknown[]> {
  const read = async (q: string): Promise<unknown[]> => (await sql.raw(q).execute(db)).rows.map((r) => Object.entries(r as object));
  return [
    await read('select * from call_participants order by app_id, session_id, seq'),
    await read('select * from user_usage order by app_id, uid, month'),
    await read('select * from group_call_attendance order by app_id, session_id'),
  ];
}

const count = async (db: Kysely<Database>, table: string): Promise<number> => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]!.n);

/**
 * Issue 16 (≤ 2,500 bytes per call): participants are stored in `call_participant_rows`, keyed by the
 * call's integer call_id and seq, without the call's text key (migration 20261126T100000).
 * `call_participants` is a view with the old columns in the old order; user_usage and
 * group_call_attendance give what they gave.
 */
describe.each(dialects)('participants keyed by calls.call_id [%s]', (dialect) => {
  const tmp = tempDir('callsync-participants-id-');
  const dbs = databaseFactory(dialect, tmp.dir);
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startTestSim([{ appId: APP, calls: 150 }]);
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('upgrades a database made at 20261126T030000: every participant row, user_usage and group_call_attendance identical', async () => {
    const url = await dbs.fresh('upgrade');
    await withStore(url, async (s) => {
      expect((await new Migrator({ db: s.db, provider: migrationProvider(s.db) }).migrateTo(BEFORE)).error).toBeUndefined();
      await seedAtBefore(s.db);
      const before = await snapshot(s.db);
      expect((before[0] as unknown[]).length).toBe(PARTICIPANTS.length);

      await migrateToLatest(s.db);

      expect(await snapshot(s.db)).toEqual(before);
      const tables = await s.db.introspection.getTables();
      expect(tables.find((t) => t.name === 'call_participant_rows')!.columns.map((c) => c.name)).toEqual(['call_id', ...COLUMNS.slice(2)]);
      expect(tables.find((t) => t.name === 'call_participants')!.isView).toBe(true);
      expect(await count(s.db, 'call_participant_rows')).toBe(PARTICIPANTS.length);
      if (dialect === 'sqlite') {
        expect((await sql`pragma foreign_key_check`.execute(s.db)).rows).toEqual([]);
        expect((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(s.db)).rows).toEqual([{ integrity_check: 'ok' }]);
      }
      // A deleted call takes its participants with it (foreign key, cascade).
      await s.db.deleteFrom('calls').where('app_id', '=', 'a').where('session_id', '=', 's1').execute();
      expect(await count(s.db, 'call_participant_rows')).toBe(PARTICIPANTS.length - 3);
      expect((await sql<{ session_id: string }>`select distinct session_id from call_participants where app_id = 'a' order by session_id`.execute(s.db)).rows.map((r) => r.session_id)).toEqual(['s2', 's3']);
    });
  });

  it('migrating down and up again keeps every participant and the views', async () => {
    const url = await dbs.fresh('down-up');
    await withStore(url, async (s) => {
      const migrator = new Migrator({ db: s.db, provider: migrationProvider(s.db) });
      expect((await migrator.migrateTo(BEFORE)).error).toBeUndefined();
      await seedAtBefore(s.db);
      const before = await snapshot(s.db);
      await migrateToLatest(s.db);
      expect(await count(s.db, 'call_participant_rows')).toBe(PARTICIPANTS.length);
      expect((await migrator.migrateTo(BEFORE)).error).toBeUndefined();
      expect(await snapshot(s.db)).toEqual(before);
      expect((await s.db.introspection.getTables()).find((t) => t.name === 'call_participants')!.isView).toBe(false);
      await migrateToLatest(s.db);
      expect(await snapshot(s.db)).toEqual(before);
    });
  });

  it('a sync writes each call’s participants under its call_id, and a second sync replaces them', async () => {
    const url = await dbs.fresh('synced');
    const stored = (u: string): Promise<{ rows: number; expected: number; orphans: number }> =>
      withStore(u, async (s) => ({
        rows: await count(s.db, 'call_participant_rows'),
        expected: Number((await sql<{ n: number }>`select coalesce(sum(participant_rows), 0) as n from calls`.execute(s.db)).rows[0]!.n),
        orphans: Number((await sql<{ n: number }>`select count(*) as n from call_participant_rows p where not exists (select 1 from calls c where c.call_id = p.call_id)`.execute(s.db)).rows[0]!.n),
      }));
    expect((await syncWith(testSettings(sim, [APP], url))).ok).toBe(true);
    const first = await stored(url);
    expect(first.rows).toBeGreaterThan(150);
    expect(first).toEqual({ rows: first.expected, expected: first.expected, orphans: 0 });
    sim.advance(APP, { endOngoing: true, newCalls: 5 });
    expect((await syncWith(testSettings(sim, [APP], url))).ok).toBe(true);
    const second = await stored(url);
    expect(second).toEqual({ rows: second.expected, expected: second.expected, orphans: 0 });
    expect(second.rows).toBeGreaterThan(first.rows);
  });
});
