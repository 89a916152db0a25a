import { sql, type Kysely } from 'kysely';

// Frozen in time: this migration must not import from src/ (the schema it creates is the one of
// its day; later changes are new migrations). Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

export async function up(db: Db): Promise<void> {
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
    .addColumn('is_final', 'integer', (c) => c.notNull())
    .addColumn('total_audio_minutes', 'real')
    .addColumn('total_video_minutes', 'real')
    .addColumn('total_duration_minutes', 'real')
    .addColumn('total_duration', 'text')
    .addColumn('total_duration_seconds', 'integer')
    .addColumn('total_participants', 'integer')
    .addColumn('has_recording', 'integer', (c) => c.notNull())
    .addColumn('initiated_at', 'integer')
    .addColumn('started_at', 'integer')
    .addColumn('ended_at', 'integer')
    .addColumn('details_source', 'text', (c) => c.notNull())
    .addColumn('list_fingerprint', 'text')
    .addColumn('raw_json', 'text', (c) => c.notNull())
    .addColumn('not_found_at', 'integer')
    .addColumn('first_synced_at', 'integer', (c) => c.notNull())
    .addColumn('synced_at', 'integer', (c) => c.notNull())
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
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('total_audio_minutes', 'real')
    .addColumn('total_video_minutes', 'real')
    .addColumn('total_duration_minutes', 'real')
    .addColumn('is_joined', 'integer', (c) => c.notNull())
    .addColumn('joined_at', 'integer')
    .addColumn('left_at', 'integer')
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
    .addColumn('duration_minutes', 'real')
    .addColumn('start_time', 'integer')
    .addColumn('end_time', 'integer')
    .addColumn('recording_url', 'text')
    .addPrimaryKeyConstraint('call_recordings_pk', ['app_id', 'session_id', 'rid'])
    .addForeignKeyConstraint('call_recordings_call_fk', ['app_id', 'session_id'], 'calls', ['app_id', 'session_id'], (fk) => fk.onDelete('cascade'))
    .execute();

  await db.schema
    .createTable('rejected_records')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('record_key', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rejected_records_key').on('rejected_records').columns(['app_id', 'record_key', 'fingerprint']).execute();

  await db.schema
    .createTable('sync_runs')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('started_at', 'integer', (c) => c.notNull())
    .addColumn('ended_at', 'integer')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('pages', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('calls_seen', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('calls_written', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('calls_from_list', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('detail_fetches', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('not_found', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retries', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_limited', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('sync_runs_app').on('sync_runs').columns(['app_id', 'started_at']).execute();

  await db.schema
    .createTable('sync_state')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('watermark_started_at', 'integer')
    .addColumn('last_success_at', 'integer')
    .addColumn('last_full_sync_at', 'integer')
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('sync_state_pk', ['app_id', 'region'])
    .execute();
}

export async function down(db: Db): Promise<void> {
  for (const t of ['sync_state', 'sync_runs', 'rejected_records', 'call_recordings', 'call_participants', 'calls']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
