/**
 * Limits on the shape of the JSON the service sends. JSON.parse accepts any nesting depth, but
 * JSON.stringify (fingerprints, raw_json, rejected payloads) overflows the stack at a few thousand
 * levels: one such record in a List page would fail every run of its app. A real call record is
 * four levels deep; a body is two more.
 */

/** Nesting kept in a response body; deeper values are cut (see capNesting). */
export const MAX_BODY_DEPTH = 64;

/** Stands in for a value that was nested deeper than MAX_BODY_DEPTH. */
export const CUT_MARKER = `[callsync: nested deeper than ${MAX_BODY_DEPTH} levels, cut]`;

/**
 * Whether `value` holds objects or arrays nested more than `limit` levels deep (`{}` is one level).
 * Never recurses more than `limit` levels, whatever the input.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit <= 0) return true;
  // Walked for every body and record (~3 times per call): no arrays allocated, no call per
  // primitive. for…in sees the plain objects JSON.parse makes (an own "__proto__" key included,
  // which shadows the accessor); measured 0.4 µs per call record against 1–2 µs with Object.values.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (v !== null && typeof v === 'object' && nestedDeeperThan(v, limit - 1)) return true;
    }
    return false;
  }
  const o = value as Record<string, unknown>;
  for (const k in o) {
    const v = o[k];
    if (v !== null && typeof v === 'object' && nestedDeeperThan(v, limit - 1)) return true;
  }
  return false;
}

function cut(value: unknown, limit: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (limit <= 0) return CUT_MARKER;
  if (Array.isArray(value)) return value.map((v: unknown) => cut(v, limit - 1));
  // fromEntries defines own properties, so a "__proto__" key stays data.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v, limit - 1)]));
}

/**
 * `value` itself when it is at most `limit` levels deep; otherwise a copy in which every object or
 * array below `limit` levels is replaced by CUT_MARKER. The result is always safe to serialise.
 */
export function capNesting(value: unknown, limit: number = MAX_BODY_DEPTH): unknown {
  return nestedDeeperThan(value, limit) ? cut(value, limit) : value;
}
