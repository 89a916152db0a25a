import type { CommandSettings } from '../config/command-settings.js';

/** What `--timezone` says when it is not given, for the help text of every command that takes it. */
export const PERIOD_ZONE_HELP = 'IANA time zone of the period (default: schedule.timezone from the config file, the zone of the nightly export; else UTC)';

/**
 * The zone a period is read in: `--timezone`, else the config file's `schedule.timezone`, else UTC.
 * The nightly export writes the previous month in `schedule.timezone`; `export billing --month`
 * typed by hand took UTC, so the same month gave two different totals from one config.
 */
export function periodTimezone(flag: string | undefined, resolved: CommandSettings): string {
  return flag ?? resolved.settings?.schedule.timezone ?? 'UTC';
}
