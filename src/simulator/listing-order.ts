import type { AppDataset } from './dataset.js';
import { hash3, type Rng, Salt } from './prng.js';
import type { ListingQuirks } from './types.js';

/**
 * The order List Calls serves when quirks or time overlays are on: every listed index, materialised
 * (the plain newest-first listing needs no array: see AppDataset.listSlice). The time-sorted base
 * and the 'unsorted' permutation are kept until the dataset changes (`version`); 'shuffled' and the
 * tie shuffle of equalStartedAt are drawn per request, as they must differ per request.
 */
export class ListingOrder {
  private version = -1;
  private pinned = false;
  /** Listed indices, newest first (live calls first when pinned). */
  private base: number[] = [];
  /** Sort time per index (Infinity for a pinned live call). */
  private keys = new Float64Array(0);
  private unsorted: number[] | null = null;

  /** Indices in serving order for one request. */
  order(ds: AppDataset, q: ListingQuirks, rng: Rng): readonly number[] {
    const pin = q.endLiveWhilePaging !== undefined;
    if (this.version !== ds.version || this.pinned !== pin) this.rebuild(ds, pin);
    switch (q.order ?? 'newest-first') {
      case 'oldest-first': {
        const out = this.base.slice().reverse();
        if (q.equalStartedAt) this.shuffleTies(out, rng);
        return out;
      }
      case 'unsorted':
        this.unsorted ??= this.base.slice().sort((a, b) => hash3(ds.ctx.seed, a, Salt.unsortedOrder) - hash3(ds.ctx.seed, b, Salt.unsortedOrder) || a - b);
        return this.unsorted;
      case 'shuffled': {
        const out = this.base.slice();
        for (let j = out.length - 1; j > 0; j--) {
          const r = rng.int(0, j);
          const t = out[j] ?? 0;
          out[j] = out[r] ?? 0;
          out[r] = t;
        }
        return out;
      }
      default:
        if (!q.equalStartedAt) return this.base;
        return this.shuffleTies(this.base.slice(), rng);
    }
  }

  private rebuild(ds: AppDataset, pin: boolean): void {
    this.version = ds.version;
    this.pinned = pin;
    this.unsorted = null;
    const n = ds.indexCount;
    const keys = new Float64Array(n);
    const base: number[] = [];
    for (let i = n - 1; i >= 0; i--) {
      if (!ds.isListed(i)) continue;
      keys[i] = ds.sortTime(i);
      base.push(i);
    }
    if (pin) for (const i of ds.liveIndices()) keys[i] = Number.POSITIVE_INFINITY;
    // Already index-descending; the sort only moves what the overlays displaced (stable on ties).
    base.sort((a, b) => (keys[b] ?? 0) - (keys[a] ?? 0) || b - a);
    this.keys = keys;
    this.base = base;
  }

  /** Shuffles each run of calls with one equal (finite) startedAt, in place. */
  private shuffleTies(out: number[], rng: Rng): number[] {
    let start = 0;
    for (let k = 1; k <= out.length; k++) {
      const prev = this.keys[out[k - 1] ?? 0] ?? 0;
      if (k < out.length && this.keys[out[k] ?? 0] === prev) continue;
      if (k - start > 1 && Number.isFinite(prev)) {
        for (let j = k - 1; j > start; j--) {
          const r = rng.int(start, j);
          const t = out[j] ?? 0;
          out[j] = out[r] ?? 0;
          out[r] = t;
        }
      }
      start = k;
    }
    return out;
  }
}
