/**
 * Number and date text of the report. Hand-rolled rather than `toLocaleString`: the grouping and
 * decimals must not depend on the ICU data or locale of the machine, so the same database always
 * gives byte-identical HTML.
 */

/** Decimal places of every minutes figure on the page (exports keep 4; a reader needs 2). */
export const DISPLAY_DECIMALS = 2;

function group(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `12345.678` → `12,345.68`; never `-0.00`. */
export function formatNumber(n: number, decimals = DISPLAY_DECIMALS): string {
  const fixed = Math.abs(n).toFixed(decimals);
  const negative = n < 0 && Number(fixed) !== 0;
  const [int = '0', frac] = fixed.split('.');
  return `${negative ? '-' : ''}${group(int)}${frac !== undefined ? `.${frac}` : ''}`;
}

export function formatMinutes(n: number): string {
  return formatNumber(n, DISPLAY_DECIMALS);
}

export function formatCount(n: number): string {
  return formatNumber(n, 0);
}

/** A 0..1 share as `42.10%`; `null` (nothing to divide by) as an em dash. */
export function formatPercent(share: number | null): string {
  return share === null ? '—' : `${formatNumber(share * 100, DISPLAY_DECIMALS)}%`;
}

/** Local wall-clock parts of a unix-seconds instant in an IANA time zone. */
export function localParts(sec: number, timezone: string): { y: number; m: number; d: number; hh: number; mm: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
  }).formatToParts(new Date(sec * 1000));
  const n = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  return { y: n('year'), m: n('month'), d: n('day'), hh: n('hour'), mm: n('minute') };
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** `YYYY-MM-DD` of an instant in `timezone`. */
export function localDate(sec: number, timezone: string): string {
  const p = localParts(sec, timezone);
  return `${p.y}-${pad(p.m)}-${pad(p.d)}`;
}

/** `YYYY-MM-DD HH:MM` of an instant in `timezone`; `—` when unknown. */
export function localDateTime(sec: number | null, timezone: string): string {
  if (sec === null) return '—';
  const p = localParts(sec, timezone);
  return `${p.y}-${pad(p.m)}-${pad(p.d)} ${pad(p.hh)}:${pad(p.mm)}`;
}
