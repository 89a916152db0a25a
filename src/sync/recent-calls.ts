/**
 * The calls listed in this run, newest pages last, with the fingerprint each was handled with; only
 * the last `capacity` listed calls are kept. A call repeated on a later page (calls inserted while
 * paging push entries down; a step-back or a second pass re-reads pages) is then neither fetched nor
 * counted twice; an older repeat finds its stored fingerprint instead. Bounded, so memory does not
 * grow with history.
 */
export class RecentCalls {
  readonly #fp = new Map<string, string>();
  readonly #order: string[] = [];
  #head = 0;

  constructor(private readonly capacity: number) {}

  get(id: string): string | undefined {
    return this.#fp.get(id);
  }

  set(id: string, fp: string): void {
    if (!this.#fp.has(id)) {
      this.#order.push(id);
      if (this.#order.length - this.#head > this.capacity) this.#fp.delete(this.#order[this.#head++]!);
      if (this.#head > this.capacity) {
        this.#order.splice(0, this.#head);
        this.#head = 0;
      }
    }
    this.#fp.set(id, fp);
  }
}
