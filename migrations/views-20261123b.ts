import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';

/**
 * Three reporting views as of migration 20261123T040000_period_columns: those of views-20261123.ts
 * with their periods read from the stored `started_day` / `started_month` columns instead of computed
 * from started_at. A period computed in the view is a GROUP BY expression no index serves, so a
 * filter on it (`where day between …`, `where month = …`) read every call; a filter on a stored,
 * indexed column is pushed into the view by both SQLite and PostgreSQL and read through the index.
 * `daily_usage` gains `month`, `call_reconciliation` gains `day` and `month` (added last: columns are
 * added, never renamed or moved). `group_call_attendance` is unchanged. Frozen in time like the
 * migrations: must not import from src/.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function createViews20261123b(db: Kysely<any>, d: DialectSql): Promise<void> {
  // Reconciliation, one row per call. `b` adds the wall clock and the tolerance, `r` the relation
  // (participant_sum wins over wall_clock), `f` the checks of implausible numbers as 0/1 (they make
  // `flagged` as well as issue codes, so each is written once), the outer select the failed checks
  // in a fixed order. The checks of the totals against each other mean nothing until a call is
  // final; those of the stored record itself (a missing type, a participant without uid, a minute
  // figure no call can have) hold for live calls too, whose minutes are billed all the same.
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
         c.has_recording, c.recording_rows, c.participant_missing_uid_rows, c.participant_negative_rows, c.participant_max_minutes,
         c.detail_error, c.stale_at, c.started_day, c.started_month,
         (c.ended_at - c.started_at) / 60.0 as wall_clock_minutes,
         coalesce(c.total_audio_minutes, 0) as ca, coalesce(c.total_video_minutes, 0) as cv,
         -- Participant entries the call had: those stored, else (a call stored from its list entry
         -- alone, e.g. not found) the count the service states; at least 1.
         case when c.participant_rows > 0 then c.participant_rows when c.total_participants > 1 then c.total_participants else 1 end as entries,
         s.tolerance
  from calls c cross join s
),
r as (
  select b.*,
    case
      -- A call Get Call could not supply (detail_error) is, like a not-found one, only what its list
      -- entry said: its totals cannot be checked against participants it may not carry.
      when is_final = 0 or not_found_at is not null or detail_error is not null or total_audio_minutes is null then 'incomplete'
      when abs(ca - participant_audio_minutes) <= tolerance and abs(cv - participant_video_minutes) <= tolerance then 'participant_sum'
      when wall_clock_minutes is not null and abs(ca - wall_clock_minutes) <= tolerance
           and (abs(cv) <= tolerance or abs(cv - wall_clock_minutes) <= tolerance) then 'wall_clock'
      else 'mismatch'
    end as relation
  from b
),
f as (
  select r.*,
    case when ca < 0 or cv < 0 or coalesce(total_duration_minutes, 0) < 0 or participant_negative_rows > 0 then 1 else 0 end as negative_minutes,
    -- Each entry may be in the call for its whole wall clock; half again covers rounding and clock
    -- skew, and 10 minutes the entries that join early or leave late (participant_outside_call) and
    -- call-level totals that are a few minutes off (totals_ne_participants): only a figure no call
    -- can reach is flagged. A negative wall clock is no measure (negative_duration says so).
    case when wall_clock_minutes >= 0
              and (participant_total_minutes > wall_clock_minutes * entries * 1.5 + 10
                   or coalesce(total_duration_minutes, 0) > wall_clock_minutes * entries * 1.5 + 10) then 1 else 0 end as beyond_wall_clock,
    -- The call-level total counts user-minutes (a 30-person hour is 1800), so it is judged per entry.
    case when wall_clock_minutes > 1440 or coalesce(participant_max_minutes, 0) > 1440
              or coalesce(total_duration_minutes, 0) > 1440 * entries then 1 else 0 end as over_24h
  from r
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
       rtrim(
         case when is_final = 1 and abs(coalesce(total_duration_minutes, 0) - (ca + cv)) > tolerance then 'audio_plus_video_ne_total,' else '' end ||
         case when is_final = 1 and total_duration is not null and (total_duration_seconds is null
                   or abs(total_duration_seconds - round(coalesce(total_duration_minutes, 0) * 60)) >= 1) then 'timer_ne_minutes,' else '' end ||
         case when is_final = 1 and total_participants is not null and total_participants <> participant_rows then 'participant_count,' else '' end ||
         case when is_final = 1 and participant_outside_rows > 0 then 'participant_outside_call,' else '' end ||
         case when is_final = 1 and ended_at < started_at then 'negative_duration,' else '' end ||
         case when is_final = 1 and relation = 'mismatch' then 'totals_ne_participants,' else '' end ||
         case when type is null then 'missing_type,' else '' end ||
         case when type not in ('audio', 'video') then 'unknown_type,' else '' end ||
         case when status is null then 'missing_status,' else '' end ||
         case when participant_missing_uid_rows > 0 then 'participant_without_uid,' else '' end ||
         case when negative_minutes = 1 then 'negative_minutes,' else '' end ||
         case when beyond_wall_clock = 1 then 'minutes_beyond_wall_clock,' else '' end ||
         case when over_24h = 1 then 'duration_over_24h,' else '' end ||
         case when is_final = 1 and has_recording = 1 and recording_rows = 0 then 'recording_missing,' else '' end ||
         case when is_final = 1 and joined_devices > 0 and participant_total_minutes = 0 then 'joined_zero_minutes,' else '' end ||
         case when is_final = 1 and ended_at is null then 'final_without_end,' else '' end ||
         case when stale_at is not null then 'stale_live,' else '' end ||
         case when detail_error is not null then 'details_missing,' else '' end, ',') as issues,
       case when negative_minutes = 1 or beyond_wall_clock = 1 or over_24h = 1 then 1 else 0 end as flagged,
       has_recording, recording_rows, participant_missing_uid_rows, participant_negative_rows, participant_max_minutes,
       detail_error, stale_at,
       started_day as day, started_month as month
from f`,
    )
    .execute(db);

  await sql
    .raw(
      `create view daily_usage as
select app_id, region, started_day as day, type,
       count(*) as calls,
       sum(is_final) as final_calls,
       sum(participant_rows) as participant_rows,
       sum(participant_audio_minutes) as participant_audio_minutes,
       sum(participant_video_minutes) as participant_video_minutes,
       sum(participant_total_minutes) as user_minutes,
       sum(coalesce(total_audio_minutes, 0)) as call_audio_minutes,
       sum(coalesce(total_video_minutes, 0)) as call_video_minutes,
       sum(coalesce(total_duration_minutes, 0)) as call_total_minutes,
       sum(recording_minutes) as recording_minutes,
       started_month as month
from calls
where started_at is not null
group by app_id, region, started_day, started_month, type`,
    )
    .execute(db);

  await sql
    .raw(
      `create view user_usage as
select p.app_id, p.uid, c.started_month as month,
       count(distinct p.session_id) as calls,
       count(distinct case when p.is_joined = 1 then p.session_id end) as joined_calls,
       sum(p.is_joined) as joined_devices,
       sum(coalesce(p.total_audio_minutes, 0)) as audio_minutes,
       sum(coalesce(p.total_video_minutes, 0)) as video_minutes,
       sum(coalesce(p.total_duration_minutes, 0)) as total_minutes
from call_participants p
join calls c on c.app_id = p.app_id and c.session_id = p.session_id
where c.started_at is not null
group by p.app_id, p.uid, c.started_month`,
    )
    .execute(db);
}
