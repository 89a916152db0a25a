import { Migrator, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migrationProvider } from '../../src/store/migrate.js';
import { databaseFactory, testDialects, type TestDialect } from '../helpers/databases.js';
import { tempDir, withStore } from '../helpers/harness.js';

const BEFORE_CALL_DETAILS = '20261123T000000_listing_proof';

const dialects: TestDialect[] = await testDialects();

/**
 * A database made before migration 20261123T010000_call_details (which rebuilds `calls` on SQLite
 * to let type and status be NULL) keeps every call, participant and recording through it: the
 * rebuild must not cascade into the child tables.
 */
describe.each(dialects)('upgrading a database with data (%s)', (dialect) => {
  const tmp = tempDir('callsync-upgrade-');
  const dbs = databaseFactory(dialect, tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('keeps calls, participants and recordings, and then accepts a call without type or status', async () => {
    const url = await dbs.fresh('upgrade');
    await withStore(url, async (s) => {
      const r = await new Migrator({ db: s.db, provider: migrationProvider(s.db) }).migrateTo(BEFORE_CALL_DETAILS);
      expect(r.error).toBeUndefined();
      await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, raw_json, first_synced_at, synced_at,
        participant_rows, joined_devices, joined_users, participant_audio_minutes, participant_video_minutes, participant_total_minutes, participant_outside_rows, recording_minutes,
        started_at, ended_at, total_audio_minutes)
        values ('a', 'us', 's1', 'audio', 'ended', 1, 1, 'detail', '{}', 1, 1, 2, 2, 2, 3.5, 0, 3.5, 0, 1.5, 1700000000, 1700000120, 2)`.execute(s.db);
      await sql`insert into call_participants (app_id, session_id, seq, uid, device_id, total_audio_minutes, total_video_minutes, total_duration_minutes, is_joined)
        values ('a', 's1', 0, 'u1', 'd1', 2, 0, 2, 1), ('a', 's1', 1, 'u2', 'd2', 1.5, 0, 1.5, 1)`.execute(s.db);
      await sql`insert into call_recordings (app_id, session_id, rid, duration_minutes) values ('a', 's1', 'r1', 1.5)`.execute(s.db);

      await migrateToLatest(s.db);

      const n = async (table: string): Promise<number> => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(s.db)).rows[0]!.n);
      expect([await n('calls'), await n('call_participants'), await n('call_recordings')]).toEqual([1, 2, 1]);
      const row = await s.db.selectFrom('calls').select(['recording_rows', 'participant_max_minutes', 'participant_negative_rows', 'has_transcription']).executeTakeFirstOrThrow();
      expect(row).toEqual({ recording_rows: 1, participant_max_minutes: 2, participant_negative_rows: 0, has_transcription: 0 });
      // raw_json is in call_payloads since 20261123T030000.
      await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, first_synced_at, synced_at)
        values ('a', 'us', 's2', null, null, 1, 0, 'list', 1, 1)`.execute(s.db);
      const rec = await s.db.selectFrom('call_reconciliation').select(['session_id', 'issues']).orderBy('session_id').execute();
      expect(rec.map((x) => x.session_id)).toEqual(['s1', 's2']);
      expect(rec[1]!.issues).toMatch(/missing_type/);
      if (dialect === 'sqlite') {
        expect((await sql`pragma foreign_key_check`.execute(s.db)).rows).toEqual([]);
        expect((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(s.db)).rows).toEqual([{ integrity_check: 'ok' }]);
        // Foreign keys are on again after the rebuild: deleting the call removes its children.
        await s.db.deleteFrom('calls').where('session_id', '=', 's1').execute();
        expect(await n('call_participants')).toBe(0);
      }
    });
  });
});
