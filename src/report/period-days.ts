import { ConfigError } from '../config/errors.js';
import { localMidnight, type Period } from '../export/period.js';
import { localParts } from './format.js';

/** One calendar day of the period in its time zone: [start, end) in unix seconds. */
export interface PeriodDay {
  day: string; // YYYY-MM-DD, local to the period's time zone
  start: number;
  end: number;
}

/** A year and a leap day: one bar per day stays readable, and the day list stays a small query. */
export const MAX_REPORT_DAYS = 366;

/**
 * The local calendar days of a period. Bounds come from `localMidnight`, so a day across a DST
 * change is 23 or 25 hours long and calls are counted on the day a local reader expects.
 * Throws ConfigError when the period has more than MAX_REPORT_DAYS days.
 */
export function periodDays(period: Period): PeriodDay[] {
  const first = localParts(period.start, period.timezone);
  const days: PeriodDay[] = [];
  let start = period.start;
  for (let i = 0; start < period.end; i++) {
    if (i >= MAX_REPORT_DAYS) {
      throw new ConfigError(`the report covers at most ${MAX_REPORT_DAYS} days; use --month, or --from/--to less than a year apart`);
    }
    // Date.UTC normalises day overflow (Nov 31 → Dec 1), which gives the next calendar date.
    const date = new Date(Date.UTC(first.y, first.m - 1, first.d + i));
    const next = new Date(Date.UTC(first.y, first.m - 1, first.d + i + 1));
    const end = Math.min(period.end, localMidnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), period.timezone));
    days.push({ day: date.toISOString().slice(0, 10), start, end });
    start = end;
  }
  return days;
}
