import { sql, type Kysely } from 'kysely';
import { dialectOf } from './dialect.js';

/**
 * The four reporting views as of 2026-11-23, created by the migration that drops the earlier ones
 * (20261123T010000_call_details). A function in its own file rather than inline so the migration
 * stays short; frozen in time like the migrations: must not import from src/.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function createViews20261123(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db);
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
