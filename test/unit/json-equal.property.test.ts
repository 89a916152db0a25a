import { describe, expect, it } from 'vitest';
import { sameJson } from '../../src/transform/json-equal.js';

/** sameJson(a, b) must never say equal when the JSON texts differ, and should see plain equality. */

let seed = 7;
const rnd = (n: number): number => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const LEAVES: unknown[] = [0, -0, 1, 1.5, 1e21, -3, '', 'a', 'b', '0', '\ud800', true, false, null];
const KEYS = ['a', 'b', 'c', '1', '2', '__proto__', ''];

function value(depth: number): unknown {
  const r = rnd(depth > 3 ? 1 : 4);
  if (r === 0) return LEAVES[rnd(LEAVES.length)];
  if (r === 1) return Array.from({ length: rnd(4) }, () => value(depth + 1));
  // Built as text and parsed, as every value sameJson sees is (own "__proto__" keys, integer keys first).
  const keys = Array.from({ length: rnd(4) }, () => KEYS[rnd(KEYS.length)]!);
  return JSON.parse(`{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(value(depth + 1)) ?? 'null'}`).join(',')}}`);
}

/** A copy with at most one small change somewhere (or none). */
function variant(v: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(v) ?? 'null') as unknown;
  if (rnd(3) === 0 || copy === null || typeof copy !== 'object') return rnd(4) === 0 ? value(0) : copy;
  const target = copy as Record<string, unknown>;
  const keys = Object.keys(target);
  if (keys.length === 0) return copy;
  const k = keys[rnd(keys.length)]!;
  if (rnd(2)) target[k] = LEAVES[rnd(LEAVES.length)];
  else delete target[k];
  return copy;
}

describe('sameJson', () => {
  it('says equal exactly when JSON.stringify gives the same text, on parsed values', () => {
    let equal = 0;
    for (let i = 0; i < 20_000; i++) {
      const a = value(0);
      const b = variant(a);
      const texts = JSON.stringify(a) === JSON.stringify(b);
      expect(sameJson(a, b)).toBe(texts);
      if (texts) equal++;
    }
    expect(equal).toBeGreaterThan(2_000);
  });

  it('tells key order, arrays from objects and nulls apart', () => {
    expect(sameJson(JSON.parse('{"a":1,"b":2}'), JSON.parse('{"b":2,"a":1}'))).toBe(false);
    expect(sameJson({ 0: 'x' }, ['x'])).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson(null, {})).toBe(false);
    expect(sameJson({ a: null }, { a: {} })).toBe(false);
    expect(sameJson({ a: [1, { b: '2' }] }, { a: [1, { b: '2' }] })).toBe(true);
  });
});
