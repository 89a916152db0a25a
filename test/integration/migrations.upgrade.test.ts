import { Migrator, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migrationProvider } from '../../src/store/migrate.js';
import { databaseFactory, testDialects, type TestDialect } from '../helpers/databases.js';
import { tempDir, withStore } from '../helpers/harness.js';

const BEFORE_CALL_DETAILS = '20261123T000000_listing_proof';
const BEFORE_PERIOD_COLUMNS = '20261123T020000_run_owner';
const BEFORE_REJECTED_REGION = '20261126T100000_participants_by_call_id';

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

/**
 * Issue 16: a database made before 20261123T040000_period_columns gets the UTC day and month of its
 * stored calls, and its views filter by them; migrating down restores the views it had.
 */
describe.each(dialects)('upgrading a database to the period columns (%s)', (dialect) => {
  const tmp = tempDir('callsync-upgrade-periods-');
  const dbs = databaseFactory(dialect, tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('fills started_day and started_month of stored calls, and the views filter by them', async () => {
    const url = await dbs.fresh('periods');
    await withStore(url, async (s) => {
      const migrator = new Migrator({ db: s.db, provider: migrationProvider(s.db) });
      expect((await migrator.migrateTo(BEFORE_PERIOD_COLUMNS)).error).toBeUndefined();
      // 2023-10-31T23:59:59Z and 2023-11-01T00:00:00Z: the two sides of a month's end, in UTC.
      for (const [id, at] of [['s1', 1698796799], ['s2', 1698796800]] as const) {
        await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, raw_json, first_synced_at, synced_at, started_at, ended_at, total_audio_minutes)
          values ('a', 'us', ${id}, 'audio', 'ended', 1, 0, 'detail', '{}', 1, 1, ${at}, ${at + 60}, 1)`.execute(s.db);
        await sql`insert into call_participants (app_id, session_id, seq, uid, device_id, total_audio_minutes, total_video_minutes, total_duration_minutes, is_joined)
          values ('a', ${id}, 0, 'u1', 'd1', 1, 0, 1, 1)`.execute(s.db);
      }
      await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, raw_json, first_synced_at, synced_at)
        values ('a', 'us', 's3', 'audio', 'initiated', 0, 0, 'list', '{}', 1, 1)`.execute(s.db);

      await migrateToLatest(s.db);

      const calls = await s.db.selectFrom('calls').select(['session_id', 'started_day', 'started_month']).orderBy('session_id').execute();
      expect(calls).toEqual([
        { session_id: 's1', started_day: '2023-10-31', started_month: '2023-10' },
        { session_id: 's2', started_day: '2023-11-01', started_month: '2023-11' },
        { session_id: 's3', started_day: null, started_month: null },
      ]);
      const one = async (q: string): Promise<unknown[]> => (await sql.raw<Record<string, unknown>>(q).execute(s.db)).rows.map((r) => Object.values(r).map(String).join('|'));
      expect(await one(`select day, month, calls from daily_usage where month = '2023-11'`)).toEqual(['2023-11-01|2023-11|1']);
      expect(await one(`select uid, month, calls from user_usage where month = '2023-10'`)).toEqual(['u1|2023-10|1']);
      expect(await one(`select session_id, day, month from call_reconciliation where day between '2023-10-31' and '2023-10-31'`)).toEqual(['s1|2023-10-31|2023-10']);

      // Down again: the views of 20261123T010000_call_details, which have no month on daily_usage.
      expect((await migrator.migrateTo(BEFORE_PERIOD_COLUMNS)).error).toBeUndefined();
      expect(await one(`select day, calls from daily_usage order by day`)).toEqual(['2023-10-31|1', '2023-11-01|1']);
      await expect(sql.raw('select month from daily_usage').execute(s.db)).rejects.toThrow();
    });
  });

  it("files each rejected record under its run's region, where the run synced the app in one region", async () => {
    const url = await dbs.fresh('rejected-region');
    await withStore(url, async (s) => {
      expect((await new Migrator({ db: s.db, provider: migrationProvider(s.db) }).migrateTo(BEFORE_REJECTED_REGION)).error).toBeUndefined();
      // Run r1 synced app1 in us only; run r2 (one `sync`, one run_id) synced app1 in us and in eu.
      for (const [run, region] of [['r1', 'us'], ['r2', 'us'], ['r2', 'eu']] as const) {
        await sql`insert into sync_runs (run_id, app_id, region, mode, started_at, status) values (${run}, 'app1', ${region}, 'full', 1, 'ok')`.execute(s.db);
      }
      for (const [key, run] of [['k1', 'r1'], ['k2', 'r2']] as const) {
        await sql`insert into rejected_records (app_id, endpoint, record_key, reason, payload, fingerprint, run_id, created_at)
          values ('app1', 'list_calls', ${key}, 'bad', '{}', ${key}, ${run}, 1)`.execute(s.db);
      }
      await migrateToLatest(s.db);
      const rows = await s.db.selectFrom('rejected_records').select(['record_key', 'region']).orderBy('record_key').execute();
      expect(rows).toEqual([{ record_key: 'k1', region: 'us' }, { record_key: 'k2', region: null }]);
    });
  });
});
