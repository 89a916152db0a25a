import { sql, type Kysely } from 'kysely';
import type { DialectSql } from './dialect.js';

/**
 * `call_reconciliation` as of migration 20261130T030000_entry_beyond_wall_clock: views-20261126.ts's,
 * its columns and every other check unchanged, but `minutes_beyond_wall_clock` (and so `flagged`)
 * also holds when one participant entry states more than the call's wall clock × 1.5 + 10 minutes:
 * what one entry can reach, as the sums are held to what all entries together can reach.
 *
 * With `unmeasured` (migration 20261130T050000_unmeasured_minutes), a final call whose wall clock
 * cannot be measured (no end or no start, or an end before its start) is held to the span its
 * participants' own times show (first join to last leave; none: 0, so the 10 minutes of slack are
 * all it may state): the check skipped such calls, and 1,000 minutes on a call without an end were
 * billed while the same on a two-minute call were flagged (probe73).
 *
 * Frozen in time like the migrations: must not import from src/. A new behaviour comes in as a
 * parameter whose default keeps what the earlier migrations made.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function createReconciliation20261130(db: Kysely<any>, d: DialectSql, perEntry = true, unmeasured = false): Promise<void> {
  // The clock minutes are held to: the wall clock; else, for a final call, its participants' span
  // (calls.participant_span_minutes, stored with the call: the view reads calls alone); a live
  // call's minutes still move.
  const span = unmeasured ? ', c.participant_span_minutes' : '';
  const clock = unmeasured
    ? `(case when wall_clock_minutes >= 0 then wall_clock_minutes
             when is_final = 1 then case when participant_span_minutes > 0 then participant_span_minutes else 0 end end)`
    : 'wall_clock_minutes';
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
         (c.ended_at - c.started_at) / 60.0 as wall_clock_minutes${span},
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
    -- Each entry on its own, too: entries that never joined (0 minutes) lent their room to one
    -- entry in the sums, and one stated with more than the whole call can hold was billed (probe68 F7).
    case when ${clock} >= 0
              and (participant_total_minutes > ${clock} * entries * 1.5 + 10
                   or coalesce(total_duration_minutes, 0) > ${clock} * entries * 1.5 + 10
                   ${perEntry ? `or coalesce(participant_max_minutes, 0) > ${clock} * 1.5 + 10` : ''}) then 1 else 0 end as beyond_wall_clock,
    -- The call-level total counts user-minutes (a 30-person hour is 1800), so it is judged per entry.
    case when wall_clock_minutes > 1440 or coalesce(participant_max_minutes, 0) > 1440
              or coalesce(total_duration_minutes, 0) > 1440 * entries then 1 else 0 end as over_24h
  from r
),
g as (
  -- One 0/1 column per issue code, in the order of the codes (a check that is null, e.g. a type
  -- compared while null, fails, as it did inside the text's case expressions).
  select f.*,
    case when is_final = 1 and abs(coalesce(total_duration_minutes, 0) - (ca + cv)) > tolerance then 1 else 0 end as i0,
    case when is_final = 1 and total_duration is not null and (total_duration_seconds is null
              or abs(total_duration_seconds - round(coalesce(total_duration_minutes, 0) * 60)) >= 1) then 1 else 0 end as i1,
    case when is_final = 1 and total_participants is not null and total_participants <> participant_rows then 1 else 0 end as i2,
    case when is_final = 1 and participant_outside_rows > 0 then 1 else 0 end as i3,
    case when is_final = 1 and ended_at < started_at then 1 else 0 end as i4,
    case when is_final = 1 and relation = 'mismatch' then 1 else 0 end as i5,
    case when type is null then 1 else 0 end as i6,
    case when type not in ('audio', 'video') then 1 else 0 end as i7,
    case when status is null then 1 else 0 end as i8,
    case when participant_missing_uid_rows > 0 then 1 else 0 end as i9,
    negative_minutes as i10,
    beyond_wall_clock as i11,
    over_24h as i12,
    case when is_final = 1 and has_recording = 1 and recording_rows = 0 then 1 else 0 end as i13,
    case when is_final = 1 and joined_devices > 0 and participant_total_minutes = 0 then 1 else 0 end as i14,
    case when is_final = 1 and ended_at is null then 1 else 0 end as i15,
    case when stale_at is not null then 1 else 0 end as i16,
    case when detail_error is not null then 1 else 0 end as i17
  from f
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
         case when i0 = 1 then 'audio_plus_video_ne_total,' else '' end ||
         case when i1 = 1 then 'timer_ne_minutes,' else '' end ||
         case when i2 = 1 then 'participant_count,' else '' end ||
         case when i3 = 1 then 'participant_outside_call,' else '' end ||
         case when i4 = 1 then 'negative_duration,' else '' end ||
         case when i5 = 1 then 'totals_ne_participants,' else '' end ||
         case when i6 = 1 then 'missing_type,' else '' end ||
         case when i7 = 1 then 'unknown_type,' else '' end ||
         case when i8 = 1 then 'missing_status,' else '' end ||
         case when i9 = 1 then 'participant_without_uid,' else '' end ||
         case when i10 = 1 then 'negative_minutes,' else '' end ||
         case when i11 = 1 then 'minutes_beyond_wall_clock,' else '' end ||
         case when i12 = 1 then 'duration_over_24h,' else '' end ||
         case when i13 = 1 then 'recording_missing,' else '' end ||
         case when i14 = 1 then 'joined_zero_minutes,' else '' end ||
         case when i15 = 1 then 'final_without_end,' else '' end ||
         case when i16 = 1 then 'stale_live,' else '' end ||
         case when i17 = 1 then 'details_missing,' else '' end, ',') as issues,
       case when negative_minutes = 1 or beyond_wall_clock = 1 or over_24h = 1 then 1 else 0 end as flagged,
       has_recording, recording_rows, participant_missing_uid_rows, participant_negative_rows, participant_max_minutes,
       detail_error, stale_at,
       started_day as day, started_month as month,
       i0 + 2 * i1 + 4 * i2 + 8 * i3 + 16 * i4 + 32 * i5 + 64 * i6 + 128 * i7 + 256 * i8 + 512 * i9 + 1024 * i10
         + 2048 * i11 + 4096 * i12 + 8192 * i13 + 16384 * i14 + 32768 * i15 + 65536 * i16 + 131072 * i17 as issue_bits
from g`,
    )
    .execute(db);
}
