export { parseTimer } from '../source/timer.js';

/**
 * Formats seconds as `HH:MM:SS`, rounding to the nearest second. Null for negative, NaN or infinite
 * input, and beyond Number.MAX_SAFE_INTEGER seconds (where the hours would print as 1e+21).
 */
export function formatTimer(seconds: number): string | null {
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  const total = Math.round(seconds);
  if (total > Number.MAX_SAFE_INTEGER) return null;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}
