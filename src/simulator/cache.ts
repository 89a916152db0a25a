/**
 * A size-bounded map that evicts the oldest insertion. No recency refresh on hits: a sync reads
 * each call once or twice (List, then maybe Get soon after), so insertion order is good enough and
 * a hit stays a single Map lookup.
 */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, V>();

  private readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = Math.max(1, capacity);
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    if (!this.map.has(key) && this.map.size >= this.capacity) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, value);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }
}
