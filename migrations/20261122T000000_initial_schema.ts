import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';

// Frozen in time: this migration must not import from src/ (the schema it creates is the one of
// its day; later changes are new migrations). Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

export async function up(db: Db, d: DialectSql): Promise<void> {
  await db.schema
    .createTable('calls')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('mode', 'text')
    .addColumn('receiver_type', 'text')
    .addColumn('receiver', 'text')
    .addColumn('initiator', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_final', 'bigint', (c) => c.notNull())
    .addColumn('total_audio_minutes', 'double precision')
    .addColumn('total_video_minutes', 'double precision')
    .addColumn('total_duration_minutes', 'double precision')
    .addColumn('total_duration', 'text')
    .addColumn('total_duration_seconds', 'bigint')
    .addColumn('total_participants', 'bigint')
    .addColumn('has_recording', 'bigint', (c) => c.notNull())
    .addColumn('initiated_at', 'bigint')
    .addColumn('started_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('details_source', 'text', (c) => c.notNull())
    .addColumn('list_fingerprint', 'text')
    .addColumn('raw_json', 'text', (c) => c.notNull())
    .addColumn('not_found_at', 'bigint')
    .addColumn('first_synced_at', 'bigint', (c) => c.notNull())
    .addColumn('synced_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('calls_pk', ['app_id', 'session_id'])
    .execute();
  await db.schema.createIndex('calls_app_started').on('calls').columns(['app_id', 'started_at']).execute();
  await db.schema.createIndex('calls_started').on('calls').column('started_at').execute();
  await db.schema
    .createIndex('calls_live')
    .on('calls')
    .columns(['app_id', 'is_final'])
    .where(sql.ref('is_final'), '=', 0)
    .execute();

  await db.schema
    .createTable('call_participants')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('total_audio_minutes', 'double precision')
    .addColumn('total_video_minutes', 'double precision')
    .addColumn('total_duration_minutes', 'double precision')
    .addColumn('is_joined', 'bigint', (c) => c.notNull())
    .addColumn('joined_at', 'bigint')
    .addColumn('left_at', 'bigint')
    .addColumn('state', 'text')
    .addPrimaryKeyConstraint('call_participants_pk', ['app_id', 'session_id', 'seq'])
    .addForeignKeyConstraint('call_participants_call_fk', ['app_id', 'session_id'], 'calls', ['app_id', 'session_id'], (fk) => fk.onDelete('cascade'))
    .execute();
  await db.schema.createIndex('call_participants_uid').on('call_participants').columns(['app_id', 'uid']).execute();

  await db.schema
    .createTable('call_recordings')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('rid', 'text', (c) => c.notNull())
    .addColumn('duration_minutes', 'double precision')
    .addColumn('start_time', 'bigint')
    .addColumn('end_time', 'bigint')
    .addColumn('recording_url', 'text')
    .addPrimaryKeyConstraint('call_recordings_pk', ['app_id', 'session_id', 'rid'])
    .addForeignKeyConstraint('call_recordings_call_fk', ['app_id', 'session_id'], 'calls', ['app_id', 'session_id'], (fk) => fk.onDelete('cascade'))
    .execute();

  await db.schema
    .createTable('rejected_records')
    .addColumn('id', d.idType, (c) => d.autoIncrement(c.primaryKey()))
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('record_key', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rejected_records_key').on('rejected_records').columns(['app_id', 'record_key', 'fingerprint']).execute();

  await db.schema
    .createTable('sync_runs')
    .addColumn('id', d.idType, (c) => d.autoIncrement(c.primaryKey()))
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('pages', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('calls_seen', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('calls_written', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('calls_from_list', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('detail_fetches', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('not_found', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('retries', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_limited', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('sync_runs_app').on('sync_runs').columns(['app_id', 'started_at']).execute();

  await db.schema
    .createTable('sync_state')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('watermark_started_at', 'bigint')
    .addColumn('last_success_at', 'bigint')
    .addColumn('last_full_sync_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('sync_state_pk', ['app_id', 'region'])
    .execute();
}

export async function down(db: Db): Promise<void> {
  for (const t of ['sync_state', 'sync_runs', 'rejected_records', 'call_recordings', 'call_participants', 'calls']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
