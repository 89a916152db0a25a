/**
 * Deterministic randomness for the simulator. Every generated value is a pure function of
 * (seed, index, salt), so call #i can be rebuilt at any time without keeping earlier calls in memory,
 * and two runs with the same seed serve byte-identical data.
 */

/** murmur3's 32-bit finaliser: spreads structured inputs (consecutive indices) over all bits. */
export function mix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of three integers; `c` is usually a salt naming the purpose of the value. */
export function hash3(a: number, b: number, c: number): number {
  let h = mix32((a + 0x9e3779b9) | 0);
  h = mix32(((h ^ b) + 0x7f4a7c15) | 0);
  h = mix32(((h ^ c) + 0x632be5ab) | 0);
  return h;
}

/** A uniform number in [0, 1) from three integers. */
export function unitHash(a: number, b: number, c: number): number {
  return hash3(a, b, c) / 4294967296;
}

/** FNV-1a over UTF-16 code units: turns an appId into a default seed. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Two hex digits per byte, precomputed: ids are built per call on the hot path. */
const BYTE_HEX: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

function byteHex(b: number): string {
  return BYTE_HEX[b] ?? '00';
}

/** mulberry32: tiny, fast and good enough for test data (not for anything secret). */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.next32() / 4294967296;
  }

  /** Uniform integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('Rng.pick needs a non-empty array');
    return item;
  }

  /** Picks from `[value, weight]` pairs; weights need not sum to 1. */
  weighted<T>(table: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, w] of table) total += w;
    let r = this.next() * total;
    for (const [value, w] of table) {
      r -= w;
      if (r < 0) return value;
    }
    const last = table[table.length - 1];
    if (last === undefined) throw new Error('Rng.weighted needs a non-empty table');
    return last[0];
  }

  hex(length: number): string {
    let out = '';
    while (out.length < length) {
      const v = this.next32();
      out += byteHex(v >>> 24) + byteHex((v >>> 16) & 255) + byteHex((v >>> 8) & 255) + byteHex(v & 255);
    }
    return out.length === length ? out : out.slice(0, length);
  }
}

/** Salts: one per purpose, so adding a new random decision never shifts existing ones. */
export const Salt = {
  time: 1,
  call: 2,
  variant: 3,
  idTagA: 4,
  idTagB: 5,
  awkwardId: 6,
  member: 7,
  groupLayout: 8,
  faultPick: 9,
  lateRecording: 10,
  idKey: 11,
  longCall: 12,
  tieGroup: 13,
  unsortedOrder: 14,
  listShuffle: 15,
  totalJitter: 16,
  summaryForm: 17,
  lateDetails: 18,
  transcripts: 19,
} as const;
