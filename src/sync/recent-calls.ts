/**
 * The calls listed in this run, newest pages last, with the fingerprint each was handled with and
 * the page (this run's count of pages planned) that last decided it; only the last `capacity`
 * listed calls are kept. A call repeated on a later page (calls inserted while paging push entries
 * down; a step-back or a second pass re-reads pages) is then neither fetched nor counted twice; an
 * older repeat finds its stored fingerprint instead. Bounded, so memory does not grow with history.
 */
export class RecentCalls {
  readonly #fp = new Map<string, string>();
  /** The page that last decided each call (see supersededOn): an earlier page's write of it is stale. */
  readonly #page = new Map<string, number>();
  readonly #order: string[] = [];
  #head = 0;

  constructor(private readonly capacity: number) {}

  get(id: string): string | undefined {
    return this.#fp.get(id);
  }

  /** The page that last decided this call, if it is still remembered. */
  page(id: string): number | undefined {
    return this.#page.get(id);
  }

  set(id: string, fp: string, page = 0): void {
    if (!this.#fp.has(id)) {
      this.#order.push(id);
      if (this.#order.length - this.#head > this.capacity) {
        const old = this.#order[this.#head++]!;
        this.#fp.delete(old);
        this.#page.delete(old);
      }
      if (this.#head > this.capacity) {
        this.#order.splice(0, this.#head);
        this.#head = 0;
      }
    }
    this.#fp.set(id, fp);
    this.#page.set(id, page);
  }
}
