import type { DetailQuirks, UnusableGetAnswer, UnusableGetSpec } from './types.js';

export const UNUSABLE_GET_ANSWERS: readonly UnusableGetAnswer[] = [
  'empty-object', 'null', 'empty-array', 'no-session-id', 'other-session', 'html-200', 'non-json-200', 'error-body-200', 'redirect',
];

const KNOWN_KEYS: ReadonlySet<string> = new Set<keyof DetailQuirks>([
  'summaryListEntries', 'unusableGet', 'lateDetails', 'participantsWithoutUid', 'callsWithoutType', 'implausibleMinutes',
  'liveBrieflyNotFound', 'stuckInitiated', 'transcriptions', 'duplicateEntries',
]);
const SPEC_KEYS: ReadonlySet<string> = new Set<keyof UnusableGetSpec>(['calls', 'answer', 'errorCode', 'until']);

/** 'error-body-200' answers this code unless the spec names another. */
export const DEFAULT_UNUSABLE_ERROR_CODE = 'ERR_CALL_SESSION_NOT_FOUND';
/** liveBrieflyNotFound: how many Get Call requests answer not-found before the call is found again. */
export const LIVE_NOT_FOUND_GETS = 2;
/** stuckInitiated: how long before `now` the stuck calls were initiated, at least. */
export const STUCK_MIN_DAYS = 10;

function isInt(v: unknown, min: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min;
}

/** The unusableGet specs as a list (one spec may be given alone). */
export function unusableSpecs(q: DetailQuirks | undefined): UnusableGetSpec[] {
  const u = q?.unusableGet;
  if (u === undefined) return [];
  return Array.isArray(u) ? u : [u];
}

/** Throws on detail quirks that cannot mean anything, naming the field (same style as validateQuirks). */
export function validateDetailQuirks(q: DetailQuirks): void {
  const where = (k: string): string => `FaultProfile.details.${k}`;
  if (typeof q !== 'object' || q === null || Array.isArray(q)) throw new Error('FaultProfile.details must be an object');
  // A misspelt quirk would silently test nothing: refuse it.
  for (const k of Object.keys(q)) if (!KNOWN_KEYS.has(k)) throw new Error(`${where(k)} is not a detail quirk; known: ${[...KNOWN_KEYS].join(', ')}`);
  for (const k of ['summaryListEntries', 'transcriptions'] as const) {
    if (q[k] !== undefined && typeof q[k] !== 'boolean') throw new Error(`${where(k)} must be true or false`);
  }
  for (const k of ['participantsWithoutUid', 'callsWithoutType', 'liveBrieflyNotFound', 'stuckInitiated', 'duplicateEntries'] as const) {
    if (q[k] !== undefined && !isInt(q[k], 0)) throw new Error(`${where(k)} must be an integer >= 0, got ${JSON.stringify(q[k])}`);
  }
  if (q.lateDetails !== undefined && !isInt(q.lateDetails.calls, 0)) throw new Error(`${where('lateDetails.calls')} must be an integer >= 0`);
  const im = q.implausibleMinutes;
  if (im !== undefined) {
    for (const k of ['negative', 'huge'] as const) {
      if (im[k] !== undefined && !isInt(im[k], 0)) throw new Error(`${where(`implausibleMinutes.${k}`)} must be an integer >= 0`);
    }
  }
  unusableSpecs(q).forEach((s, n) => {
    const at = Array.isArray(q.unusableGet) ? `unusableGet[${n}]` : 'unusableGet';
    if (typeof s !== 'object' || s === null) throw new Error(`${where(at)} must be { calls, answer, errorCode?, until? }`);
    for (const k of Object.keys(s)) if (!SPEC_KEYS.has(k)) throw new Error(`${where(`${at}.${k}`)} is not known; known: ${[...SPEC_KEYS].join(', ')}`);
    if (!isInt(s.calls, 0)) throw new Error(`${where(`${at}.calls`)} must be an integer >= 0`);
    if (!UNUSABLE_GET_ANSWERS.includes(s.answer)) throw new Error(`${where(`${at}.answer`)} must be one of ${UNUSABLE_GET_ANSWERS.join(', ')}, got ${JSON.stringify(s.answer)}`);
    if (s.errorCode !== undefined && (typeof s.errorCode !== 'string' || s.errorCode === '')) throw new Error(`${where(`${at}.errorCode`)} must be a non-empty string`);
    // until 1 would be "always proper": a spec that tests nothing.
    if (s.until !== undefined && s.until !== 'forever' && !isInt(s.until, 2)) throw new Error(`${where(`${at}.until`)} must be 'forever' or an integer >= 2 (the first proper Get request)`);
  });
}
