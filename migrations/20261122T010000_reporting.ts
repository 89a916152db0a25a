import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** Per-call participant aggregates, kept on `calls` when a call is written (its participants are
 * replaced with it), so reconciliation and exports scan calls alone, never 4 rows per call. */
const AGGREGATES: [string, 'bigint' | 'double precision'][] = [
  ['participant_rows', 'bigint'],
  ['joined_devices', 'bigint'],
  ['joined_users', 'bigint'],
  ['participant_audio_minutes', 'double precision'],
  ['participant_video_minutes', 'double precision'],
  ['participant_total_minutes', 'double precision'],
  ['participant_outside_rows', 'bigint'],
  ['recording_minutes', 'double precision'],
];

export async function up(db: Db, d: DialectSql): Promise<void> {
  for (const [name, type] of AGGREGATES) {
    await db.schema.alterTable('calls').addColumn(name, type, (c) => c.notNull().defaultTo(0)).execute();
  }
  // Fill the aggregates of calls written before this migration, set-based.
  await sql`
    update calls set
      participant_rows = (select count(*) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id),
      joined_devices = (select count(*) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id and p.is_joined = 1),
      joined_users = (select count(distinct p.uid) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id and p.is_joined = 1),
      participant_audio_minutes = coalesce((select sum(p.total_audio_minutes) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id), 0),
      participant_video_minutes = coalesce((select sum(p.total_video_minutes) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id), 0),
      participant_total_minutes = coalesce((select sum(p.total_duration_minutes) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id), 0),
      participant_outside_rows = (select count(*) from call_participants p where p.app_id = calls.app_id and p.session_id = calls.session_id
        and calls.started_at is not null and calls.ended_at is not null
        and ((p.joined_at is not null and (p.joined_at < calls.started_at or p.joined_at > calls.ended_at))
          or (p.left_at is not null and (p.left_at > calls.ended_at or p.left_at < calls.started_at)))),
      recording_minutes = coalesce((select sum(r.duration_minutes) from call_recordings r where r.app_id = calls.app_id and r.session_id = calls.session_id), 0)
  `.execute(db);
  await db.schema.alterTable('sync_runs').addColumn('groups_synced', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('sync_runs').addColumn('members_synced', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('calls_group_receiver').on('calls').columns(['app_id', 'receiver_type', 'receiver']).execute();

  await db.schema
    .createTable('callsync_settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.insertInto('callsync_settings').values({ key: 'reconcile_tolerance_minutes', value: '0.01' }).execute();

  await db.schema
    .createTable('group_members')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('guid', 'text', (c) => c.notNull())
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('avatar', 'text')
    .addColumn('link', 'text')
    .addColumn('metadata_json', 'text')
    .addColumn('status', 'text')
    .addColumn('role', 'text')
    .addColumn('scope', 'text')
    .addColumn('joined_at', 'bigint')
    .addColumn('created_at', 'bigint')
    .addColumn('updated_at', 'bigint')
    .addColumn('conversation_id', 'text')
    .addColumn('synced_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('group_members_pk', ['app_id', 'guid', 'uid'])
    .execute();

  await db.schema
    .createTable('synced_groups')
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('guid', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('members', 'bigint', (c) => c.notNull())
    .addColumn('synced_at', 'bigint', (c) => c.notNull())
    .addColumn('not_found_at', 'bigint')
    .addPrimaryKeyConstraint('synced_groups_pk', ['app_id', 'guid'])
    .execute();

  // Reconciliation, one row per call. `b` adds the wall clock and the tolerance, `r` the relation
  // (participant_sum wins over wall_clock), the outer select the failed checks in a fixed order.
  await sql
    .raw(
      `create view call_reconciliation as
with s as (
  select coalesce(max(${d.real('value')}), 0.01) as tolerance from callsync_settings where key = 'reconcile_tolerance_minutes'
),
b as (
  select c.app_id, c.region, c.session_id, c.type, c.mode, c.receiver_type, c.receiver, c.initiator, c.status, c.is_final,
         c.started_at, c.ended_at, c.not_found_at, c.details_source,
         c.participant_audio_minutes, c.participant_video_minutes, c.participant_total_minutes,
         c.total_audio_minutes, c.total_video_minutes, c.total_duration_minutes, c.total_duration, c.total_duration_seconds,
         c.participant_rows, c.joined_devices, c.joined_users, c.total_participants, c.participant_outside_rows, c.recording_minutes,
         (c.ended_at - c.started_at) / 60.0 as wall_clock_minutes,
         coalesce(c.total_audio_minutes, 0) as ca, coalesce(c.total_video_minutes, 0) as cv,
         s.tolerance
  from calls c cross join s
),
r as (
  select b.*,
    case
      when is_final = 0 or not_found_at is not null or total_audio_minutes is null then 'incomplete'
      when abs(ca - participant_audio_minutes) <= tolerance and abs(cv - participant_video_minutes) <= tolerance then 'participant_sum'
      when wall_clock_minutes is not null and abs(ca - wall_clock_minutes) <= tolerance
           and (abs(cv) <= tolerance or abs(cv - wall_clock_minutes) <= tolerance) then 'wall_clock'
      else 'mismatch'
    end as relation
  from b
)
select app_id, region, session_id, type, mode, receiver_type, receiver, initiator, status, is_final,
       started_at, ended_at, not_found_at, details_source,
       participant_audio_minutes, participant_video_minutes, participant_total_minutes,
       wall_clock_minutes,
       total_audio_minutes, total_video_minutes, total_duration_minutes, total_duration, total_duration_seconds,
       ca - participant_audio_minutes as audio_delta_minutes,
       cv - participant_video_minutes as video_delta_minutes,
       coalesce(total_duration_minutes, 0) - participant_total_minutes as total_delta_minutes,
       ca - wall_clock_minutes as wall_clock_delta_minutes,
       total_duration_seconds / 60.0 - total_duration_minutes as timer_delta_minutes,
       participant_rows, joined_devices, joined_users, total_participants,
       recording_minutes, tolerance, relation,
       case when is_final = 0 then '' else rtrim(
         case when abs(coalesce(total_duration_minutes, 0) - (ca + cv)) > tolerance then 'audio_plus_video_ne_total,' else '' end ||
         case when total_duration is not null and (total_duration_seconds is null
                   or abs(total_duration_seconds - round(coalesce(total_duration_minutes, 0) * 60)) >= 1) then 'timer_ne_minutes,' else '' end ||
         case when total_participants is not null and total_participants <> participant_rows then 'participant_count,' else '' end ||
         case when participant_outside_rows > 0 then 'participant_outside_call,' else '' end ||
         case when ended_at < started_at then 'negative_duration,' else '' end ||
         case when relation = 'mismatch' then 'totals_ne_participants,' else '' end, ',') end as issues
from r`,
    )
    .execute(db);

  await sql
    .raw(
      `create view daily_usage as
select app_id, region, ${d.day('started_at')} as day, type,
       count(*) as calls,
       sum(is_final) as final_calls,
       sum(participant_rows) as participant_rows,
       sum(participant_audio_minutes) as participant_audio_minutes,
       sum(participant_video_minutes) as participant_video_minutes,
       sum(participant_total_minutes) as user_minutes,
       sum(coalesce(total_audio_minutes, 0)) as call_audio_minutes,
       sum(coalesce(total_video_minutes, 0)) as call_video_minutes,
       sum(coalesce(total_duration_minutes, 0)) as call_total_minutes,
       sum(recording_minutes) as recording_minutes
from calls
where started_at is not null
group by app_id, region, ${d.day('started_at')}, type`,
    )
    .execute(db);

  await sql
    .raw(
      `create view user_usage as
select p.app_id, p.uid, ${d.month('c.started_at')} as month,
       count(distinct p.session_id) as calls,
       count(distinct case when p.is_joined = 1 then p.session_id end) as joined_calls,
       sum(p.is_joined) as joined_devices,
       sum(coalesce(p.total_audio_minutes, 0)) as audio_minutes,
       sum(coalesce(p.total_video_minutes, 0)) as video_minutes,
       sum(coalesce(p.total_duration_minutes, 0)) as total_minutes
from call_participants p
join calls c on c.app_id = p.app_id and c.session_id = p.session_id
where c.started_at is not null
group by p.app_id, p.uid, ${d.month('c.started_at')}`,
    )
    .execute(db);

  await sql
    .raw(
      `create view group_call_attendance as
with gc as (
  select app_id, session_id, receiver as guid, type, status, started_at, ended_at, joined_users
  from calls where receiver_type = 'group'
),
members as (
  select app_id, guid, count(*) as members from group_members group by app_id, guid
),
pm as (
  select gc.app_id, gc.session_id,
         count(distinct case when p.is_joined = 1 and m.uid is not null then p.uid end) as joined_members,
         sum(case when m.scope = 'admin' then coalesce(p.total_duration_minutes, 0) else 0 end) as admin_minutes,
         sum(case when m.scope = 'moderator' then coalesce(p.total_duration_minutes, 0) else 0 end) as moderator_minutes,
         sum(case when m.scope = 'participant' then coalesce(p.total_duration_minutes, 0) else 0 end) as participant_scope_minutes,
         sum(case when m.uid is not null and coalesce(m.scope, '') not in ('admin', 'moderator', 'participant') then coalesce(p.total_duration_minutes, 0) else 0 end) as other_scope_minutes,
         sum(case when m.uid is null then coalesce(p.total_duration_minutes, 0) else 0 end) as non_member_minutes
  from gc
  join call_participants p on p.app_id = gc.app_id and p.session_id = gc.session_id
  left join group_members m on m.app_id = gc.app_id and m.guid = gc.guid and m.uid = p.uid
  group by gc.app_id, gc.session_id
)
select gc.app_id, gc.session_id, gc.guid, gc.type, gc.status, gc.started_at, gc.ended_at,
       coalesce(members.members, 0) as members_at_last_sync,
       gc.joined_users as joined_participants,
       coalesce(pm.joined_members, 0) as joined_members,
       case when coalesce(members.members, 0) = 0 then null else ${d.real('coalesce(pm.joined_members, 0)')} / members.members end as attendance_rate,
       coalesce(pm.admin_minutes, 0) as admin_minutes,
       coalesce(pm.moderator_minutes, 0) as moderator_minutes,
       coalesce(pm.participant_scope_minutes, 0) as participant_scope_minutes,
       coalesce(pm.other_scope_minutes, 0) as other_scope_minutes,
       coalesce(pm.non_member_minutes, 0) as non_member_minutes
from gc
left join members on members.app_id = gc.app_id and members.guid = gc.guid
left join pm on pm.app_id = gc.app_id and pm.session_id = gc.session_id`,
    )
    .execute(db);
}

export async function down(db: Db): Promise<void> {
  for (const v of ['group_call_attendance', 'user_usage', 'daily_usage', 'call_reconciliation']) {
    await sql.raw(`drop view if exists ${v}`).execute(db);
  }
  await db.schema.dropTable('synced_groups').ifExists().execute();
  await db.schema.dropTable('group_members').ifExists().execute();
  await db.schema.dropTable('callsync_settings').ifExists().execute();
  await db.schema.dropIndex('calls_group_receiver').ifExists().execute();
  await db.schema.alterTable('sync_runs').dropColumn('members_synced').execute();
  await db.schema.alterTable('sync_runs').dropColumn('groups_synced').execute();
  for (const [name] of AGGREGATES.reverse()) await db.schema.alterTable('calls').dropColumn(name).execute();
}
