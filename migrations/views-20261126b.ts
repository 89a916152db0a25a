import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';

/**
 * The two views that read participants, as of migration 20261126T100000_participants_by_call_id:
 * the same columns, rows and meaning as before, now reading `call_participant_rows` by the call's
 * integer `call_id` instead of the compatibility view `call_participants` by its text key.
 *
 * - `user_usage` is views-20261126.ts's, its text unchanged but for the participants' join, the
 *   columns that came from the participant row's key (app_id, now the call's own) and the calls it
 *   counts: distinct call_id, not session_id (the same count within an app: one call_id per
 *   session), so that `calls_month_key` needs no session_id (see 20261126T100000).
 * - `group_call_attendance` is views-20261123.ts's; `gc` carries the call's call_id for the join.
 *
 * Frozen in time like the migrations: must not import from src/.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function createViews20261126b(db: Kysely<any>, d: DialectSql): Promise<void> {
  await sql
    .raw(
      `create view user_usage as
select c.app_id, p.uid, c.started_month as month,
       count(distinct c.call_id) as calls,
       count(distinct case when p.is_joined = 1 then c.call_id end) as joined_calls,
       sum(p.is_joined) as joined_devices,
       sum(coalesce(p.total_audio_minutes, 0)) as audio_minutes,
       sum(coalesce(p.total_video_minutes, 0)) as video_minutes,
       sum(coalesce(p.total_duration_minutes, 0)) as total_minutes
from calls c
join call_participant_rows p on p.call_id = c.call_id
where c.started_month is not null and c.participant_rows >= 0
group by c.app_id, p.uid, c.started_month`,
    )
    .execute(db);

  await sql
    .raw(
      `create view group_call_attendance as
with gc as (
  select call_id, app_id, session_id, receiver as guid, type, status, started_at, ended_at, joined_users
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
  join call_participant_rows p on p.call_id = gc.call_id
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
