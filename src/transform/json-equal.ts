/**
 * Whether JSON.stringify(a) === JSON.stringify(b), for values JSON.parse made, without building
 * either text: Get Call answers nearly every call exactly as it was listed, and serialising the
 * answer only to find it equal cost ~10 µs a call. Objects compare key by key in order (the order
 * JSON.stringify writes them). A false answer is always safe: the caller then serialises and
 * compares the texts.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  // Equal primitives (0 and -0 included: both are written "0") or one object.
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const oa = a as Record<string, unknown>;
  const ob = b as Record<string, unknown>;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson(oa[k], ob[k])) return false;
  }
  return true;
}
