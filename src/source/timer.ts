/**
 * The call-level `totalDuration` is a timer string `HH:MM:SS` (api-seed.md §2.4). Hours may exceed
 * 99 for very long calls; `MM:SS` is accepted too. Returns whole seconds, or null when the text is
 * not a timer (or names more seconds than a number holds exactly).
 */
export function parseTimer(text: string | null | undefined): number | null {
  if (typeof text !== 'string') return null;
  const m = /^\s*(?:(\d+):)?([0-5]?\d):([0-5]?\d)(?:\.\d+)?\s*$/.exec(text);
  if (!m) return null;
  const [, h, mm, ss] = m;
  const seconds = Number(h ?? 0) * 3600 + Number(mm) * 60 + Number(ss);
  return Number.isSafeInteger(seconds) ? seconds : null;
}
