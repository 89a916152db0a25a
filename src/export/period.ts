import { ConfigError } from '../config/errors.js';

/** A billing period: [start, end) in unix seconds, with the labels a finance person reads. */
export interface Period {
  label: string; // 2025-11, or 2025-11-03..2025-11-17
  timezone: string;
  start: number;
  end: number;
}

function assertTimezone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw new ConfigError(`--timezone ${JSON.stringify(tz)} is not an IANA time zone; e.g. UTC, Europe/Berlin, America/New_York`);
  }
}

/** Offset of `tz` from UTC at the instant `utcMs`, in milliseconds. */
function offsetMs(utcMs: number, tz: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const n = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return asUtc - Math.floor(utcMs / 1000) * 1000;
}

/** y-m-d h:m:s of the instant `utcMs` in `tz`, as if it were UTC (ms): what a clock there shows. */
function wallClockMs(utcMs: number, tz: string): number {
  return Math.floor(utcMs / 1000) * 1000 + offsetMs(utcMs, tz);
}

/**
 * Unix seconds at which the local day y-m-d begins in `tz`: its midnight, the first one where a
 * clock shows midnight twice, and where midnight does not exist (a DST jump at 00:00, as in
 * America/Santiago, America/Havana, Atlantic/Azores) the jump itself. Reading the offset once more
 * at a first guess, as this did before, landed at 23:00 of the previous day there, so a day's calls
 * were billed to the day before (probe round 16 a, F5).
 */
export function localMidnight(y: number, m: number, d: number, tz: string): number {
  return localInstant(Date.UTC(y, m - 1, d), tz);
}

/**
 * Unix seconds at which clocks in `tz` show the wall-clock time `wall` (y-m-d h:m:s written as if
 * it were UTC, in whole seconds of ms): the first of two where it shows twice, the jump where it does not exist.
 */
export function localInstant(wall: number, tz: string): number {
  const HOUR = 3_600_000;
  // The offsets in force around that time (a zone's offset lies within ±15 h): wall in each.
  const candidates = [offsetMs(wall - 30 * HOUR, tz), offsetMs(wall + 30 * HOUR, tz), offsetMs(wall, tz)].map((o) => wall - o);
  const exact = candidates.filter((t) => wallClockMs(t, tz) === wall);
  if (exact.length) return Math.floor(Math.min(...exact) / 1000);
  // No such time (a DST jump over it): the jump, the first instant its clocks show that time or later.
  // Between the two candidates the wall clock only moves forward, so the first such second is found by halving.
  let lo = Math.min(...candidates);
  let hi = Math.max(...candidates);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (wallClockMs(mid, tz) >= wall) hi = mid;
    else lo = mid;
  }
  return Math.floor(hi / 1000);
}

/** Days in month `m` (1–12) of year `y`, leap years included. */
function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/**
 * Why YYYY-MM-DD is not a day of the calendar (2025-02-30, 2025-13-01, 2025-11-31), or undefined
 * when it is one. Date.parse and Date.UTC would roll such a day over into the next month silently.
 */
export function calendarDateProblem(ymd: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(ymd);
  if (!m) return 'not a date; use YYYY-MM-DD';
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12) return `there is no month ${m[2]}; use YYYY-MM-DD with a month 01–12`;
  const last = daysInMonth(y, mo);
  if (d < 1 || d > last) return `there is no day ${m[3]} in ${m[1]}-${m[2]} (it has ${last} days)`;
  return undefined;
}

/** Call logs hold unix times: a period before 1970 is a typo (`--month 0000-01` was taken, exit 0). */
function assertUnixYear(flag: string, value: string, y: number): void {
  if (y < 1970) throw new ConfigError(`${flag} ${JSON.stringify(value)}: no call is older than 1970 (unix time); check the year`);
}

function parseDate(flag: string, value: string): [number, number, number] {
  const v = value.trim();
  const problem = calendarDateProblem(v);
  if (problem) throw new ConfigError(`${flag} ${JSON.stringify(value)}: ${problem}`);
  const [y, m, d] = v.split('-').map(Number) as [number, number, number];
  assertUnixYear(flag, value, y);
  return [y, m, d];
}

/** `--month YYYY-MM`, or `--from/--to YYYY-MM-DD` (to is exclusive), in a time zone. */
export function resolvePeriod(opts: { month?: string; from?: string; to?: string; timezone?: string }): Period {
  const tz = opts.timezone ?? 'UTC';
  assertTimezone(tz);
  if (opts.month !== undefined) {
    if (opts.from !== undefined || opts.to !== undefined) throw new ConfigError('give either --month or --from/--to, not both');
    const m = /^(\d{4})-(\d{2})$/.exec(opts.month.trim());
    if (!m) throw new ConfigError(`--month ${JSON.stringify(opts.month)} is not a month; use YYYY-MM, e.g. 2025-11`);
    if (Number(m[2]) < 1 || Number(m[2]) > 12) throw new ConfigError(`--month ${JSON.stringify(opts.month)}: there is no month ${m[2]}; use YYYY-MM with a month 01–12`);
    const y = Number(m[1]);
    const mo = Number(m[2]);
    assertUnixYear('--month', opts.month, y);
    return { label: opts.month.trim(), timezone: tz, start: localMidnight(y, mo, 1, tz), end: mo === 12 ? localMidnight(y + 1, 1, 1, tz) : localMidnight(y, mo + 1, 1, tz) };
  }
  if (opts.from === undefined || opts.to === undefined) throw new ConfigError('give --month YYYY-MM, or both --from and --to (YYYY-MM-DD, --to exclusive)');
  const f = parseDate('--from', opts.from);
  const t = parseDate('--to', opts.to);
  const start = localMidnight(...f, tz);
  const end = localMidnight(...t, tz);
  if (end <= start) throw new ConfigError('--to must be after --from (--to is exclusive)');
  return { label: `${opts.from.trim()}..${opts.to.trim()}`, timezone: tz, start, end };
}

/** The previous calendar month of `nowSec` in `tz`, as YYYY-MM. */
export function previousMonth(nowSec: number, tz: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit' }).formatToParts(new Date(nowSec * 1000));
  let y = Number(parts.find((p) => p.type === 'year')?.value);
  let m = Number(parts.find((p) => p.type === 'month')?.value) - 1;
  if (m === 0) {
    m = 12;
    y -= 1;
  }
  return `${y}-${String(m).padStart(2, '0')}`;
}

/** ISO 8601 text of unix seconds (UTC), for exports. */
export function isoUtc(sec: number | null): string {
  return sec === null ? '' : new Date(sec * 1000).toISOString().replace('.000Z', 'Z');
}
