import { ConfigError } from '../config/errors.js';
import { calendarDateProblem, localInstant } from '../export/period.js';

/** Parses a --since/--until value: unix seconds, a date (YYYY-MM-DD, UTC midnight) or an ISO timestamp (UTC unless it states an offset). */
export function parseTimeArg(flag: string, value: string): number {
  const v = value.trim();
  if (/^\d{9,10}$/.test(v)) return Number(v);
  // Checked first: Date.parse rolls a day the month lacks over into the next month (2025-02-30 is 2 March).
  const problem = /^\d{4}-\d{2}-\d{2}(?:$|T)/.test(v) ? calendarDateProblem(v.slice(0, 10)) : undefined;
  if (problem) throw new ConfigError(`${flag} ${JSON.stringify(value)}: ${problem}`);
  // A date alone is its UTC midnight; a date-time without an offset is UTC too, as every time callsync
  // shows or stores is (and as source/schemas.ts reads the service's): Date.parse takes the machine's
  // zone for it, and `reconcile --from 2025-11-20T00:00:00` summed another window in New York than
  // in the UTC container, exit 0 (probe68 F1).
  // Only a bare time gets the Z: one naming its zone in words (`10:00 UTC`, `GMT`) became `UTCZ`,
  // not a date, and was refused where Date.parse had read it (probe70).
  const t = v.replace(' ', 'T');
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/.test(t) ? `${t}Z` : v;
  const ms = Date.parse(iso);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(ms)) {
    throw new ConfigError(`${flag} ${JSON.stringify(value)} is not a date; use YYYY-MM-DD, an ISO timestamp or unix seconds`);
  }
  return Math.floor(ms / 1000);
}

/**
 * As parseTimeArg, but a date or a date-time without an offset is read on the clocks of `tz` (a
 * date: its local midnight), so `reconcile --from 2026-10-01 --timezone Europe/Berlin` begins
 * where the Berlin billing export of October does. Unix seconds and times stating an offset or a
 * zone are what they say. In UTC this is parseTimeArg.
 */
export function parseTimeArgIn(flag: string, value: string, tz: string): number {
  const v = value.trim().replace(' ', 'T');
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?$/.exec(v);
  if (tz === 'UTC' || !m) return parseTimeArg(flag, value);
  const problem = calendarDateProblem(v.slice(0, 10));
  if (problem) throw new ConfigError(`${flag} ${JSON.stringify(value)}: ${problem}`);
  const [h, mi, s] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (h > 23 || mi > 59 || s > 59) throw new ConfigError(`${flag} ${JSON.stringify(value)} is not a time of day; use HH:MM or HH:MM:SS`);
  return localInstant(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), h, mi, s), tz);
}
