import { hash3, Salt } from './prng.js';

/**
 * Session ids look like the service's (`v1.{region}.{appId}.{24 hex}`) but encode the call's index,
 * so Get Call can find call #i among a million without a lookup table: the first 8 hex digits are an
 * invertible 32-bit permutation of the index, the other 16 a keyed hash that makes guessed ids fail.
 */

const M1 = 0x7feb352d;
const M2 = 0x846ca68b;

/** Inverse of an odd number modulo 2^32 by Newton's iteration (each step doubles the correct bits). */
function inverseOdd(c: number): number {
  let inv = c;
  for (let k = 0; k < 5; k++) inv = Math.imul(inv, 2 - Math.imul(c, inv));
  return inv >>> 0;
}
const M1_INV = inverseOdd(M1);
const M2_INV = inverseOdd(M2);

export function permute32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, M1);
  h ^= h >>> 15;
  h = Math.imul(h, M2);
  h ^= h >>> 16;
  return h >>> 0;
}

export function unpermute32(y: number): number {
  let h = y >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, M2_INV);
  h ^= h >>> 15;
  h ^= h >>> 30;
  h = Math.imul(h, M1_INV);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * About 1 % of ids carry characters that break naive URL building (`/`, `..`, `?`, `%`, `#`, `&`):
 * the real ids are opaque strings, and a client must percent-encode them as one path segment.
 */
const AWKWARD_SUFFIX = '/../%2F?q=1&r=%#frag';
const AWKWARD_PER_MILLE = 10;

function hex8(v: number): string {
  return (v >>> 0).toString(16).padStart(8, '0');
}

export function isAwkwardIndex(seed: number, index: number): boolean {
  return hash3(seed, index, Salt.awkwardId) % 1000 < AWKWARD_PER_MILLE;
}

function indexKey(seed: number): number {
  return hash3(seed, 0, Salt.idKey);
}

export function sessionIdFor(appId: string, region: string, seed: number, index: number): string {
  const head = hex8(permute32((index ^ indexKey(seed)) >>> 0));
  const tag = hex8(hash3(seed, index, Salt.idTagA)) + hex8(hash3(seed, index, Salt.idTagB));
  const id = `v1.${region}.${appId}.${head}${tag}`;
  return isAwkwardIndex(seed, index) ? id + AWKWARD_SUFFIX : id;
}

const HEX8 = /^[0-9a-f]{8}$/;

/**
 * The index a session id encodes, or null when it cannot be one of this app's ids. The caller must
 * still compare against `sessionIdFor(index)`: only the head is decoded here.
 */
export function indexFromSessionId(id: string, appId: string, region: string, seed: number): number | null {
  const prefix = `v1.${region}.${appId}.`;
  if (!id.startsWith(prefix)) return null;
  const head = id.slice(prefix.length, prefix.length + 8);
  if (!HEX8.test(head)) return null;
  return (unpermute32(Number.parseInt(head, 16)) ^ indexKey(seed)) >>> 0;
}
