/**
 * An exact-enough count of distinct ids, for the listing proofs (listing-evidence.ts): a million
 * calls' ids in 16 MB.
 */

/** Bits of a hash kept per id: collisions among a million ids are ~5e-5 likely (each undercounts by one). Never 0 (an empty slot). */
function hash53(id: string): number {
  // Two FNV-1a passes with different offsets: 21 + 32 bits.
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193 + 0x2000);
  }
  return ((a >>> 11) * 0x100000000 + (b >>> 0)) || 1;
}

/** The slot holding hash `h` in an open-addressed table (linear probing), or the empty slot where it goes. */
function slotOf(slots: Float64Array, h: number): number {
  const mask = slots.length - 1;
  let i = (h % 0x100000000) & mask;
  while (slots[i] !== 0 && slots[i] !== h) i = (i + 1) & mask;
  return i;
}

/**
 * Counts distinct ids exactly enough to prove a listing complete, in 16 bytes per id (a Set of the
 * ids themselves would hold ~100 MB at a million calls): an open-addressing hash set of 53-bit
 * hashes in a typed array, grown at half load.
 */
export class DistinctIds {
  #slots = new Float64Array(1 << 12);
  #size = 0;

  /** Records `id`; true when it was not seen before. */
  add(id: string): boolean {
    if (this.#size * 2 >= this.#slots.length) this.#grow();
    if (!this.#insert(this.#slots, hash53(id))) return false;
    this.#size++;
    return true;
  }

  get count(): number {
    return this.#size;
  }

  /** Whether `id` was recorded (by its 53-bit hash: a collision can only answer yes). */
  has(id: string): boolean {
    const h = hash53(id);
    return this.#slots[slotOf(this.#slots, h)] === h;
  }

  #insert(slots: Float64Array, h: number): boolean {
    const i = slotOf(slots, h);
    if (slots[i] === h) return false;
    slots[i] = h;
    return true;
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = new Float64Array(old.length * 2);
    for (const v of old) if (v !== 0) this.#insert(this.#slots, v);
  }
}
