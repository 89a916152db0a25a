import { ConfigError } from '../config/errors.js';

/**
 * The simulator's clock when the CLI starts it: the current time rounded down to the whole hour.
 * The dataset ends there, so "last month" is full; rounding keeps it the same for a given seed
 * within the hour (a restart a minute later serves the same calls).
 */
export function currentSimNow(nowMs: number = Date.now()): number {
  return Math.floor(nowMs / 3_600_000) * 3600;
}

const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * `--now`: YYYY-MM-DD (UTC midnight), an ISO timestamp (UTC unless it names a zone) or unix
 * seconds. Impossible dates (2025-02-30) are refused, not rolled over as Date.parse does.
 */
export function parseSimNow(flag: string, value: string): number {
  const v = value.trim();
  const bad = (): ConfigError => new ConfigError(`${flag} ${JSON.stringify(value)} is not a time; use YYYY-MM-DD, an ISO timestamp (e.g. 2026-11-01T12:00:00Z) or unix seconds`);
  if (/^\d{1,11}$/.test(v)) return Number(v);
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:([T ])(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(v);
  if (!m) throw bad();
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (mo < 1 || mo > 12 || d < 1 || d > MONTH_DAYS[mo - 1]! || (mo === 2 && d === 29 && !leap)) throw bad();
  if (m[4] !== undefined && (Number(m[5]) > 23 || Number(m[6]) > 59 || Number(m[7] ?? 0) > 59)) throw bad();
  const iso = m[4] === undefined ? `${m[1]}-${m[2]}-${m[3]}T00:00:00Z` : `${v.replace(' ', 'T')}${m[8] === undefined ? 'Z' : ''}`;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms) || ms < 0) throw bad();
  return Math.floor(ms / 1000);
}

/** YYYY-MM of the calendar month (UTC) before the one `now` (unix seconds) falls in. */
export function monthBefore(now: number): string {
  const d = new Date(now * 1000);
  const prev = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1));
  return `${prev.getUTCFullYear()}-${String(prev.getUTCMonth() + 1).padStart(2, '0')}`;
}
