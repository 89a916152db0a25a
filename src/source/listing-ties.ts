import { ORDER_KEYS, type EntryTimes, type OrderKey } from './listing-order.js';

/** Per time value seen across a page boundary: entries of it counted in each pass, and the calls among them. */
interface TieGroup {
  entries: number[];
  ids: Set<string>;
  /** First split by a later pass (held only when asked: see unproved). */
  late: boolean;
}

/**
 * Calls of one time listed across a page boundary, counted pass by pass, for windows (incremental,
 * backfill), which have no count of their own.
 *
 * Without calls coming or going, the g calls of one time fill g places of the listing: a pass that
 * shows g entries of that time but fewer distinct calls listed some twice and, by the same count,
 * skipped others (an ORDER BY that leaves ties undecided, ordering them differently for each page).
 * A second pass that splits them the same way finds nothing new, and only a count could tell; an
 * incremental run's count is held against every stored call, so calls removed at the service
 * outside the window (retention) hid the loss: 14 of 100 windows with six equal times across a page
 * edge and three removals lost calls, ok (hostile probe, session 24).
 *
 * So a group is proved when the calls of that time listed over all passes are at least as many as
 * the fewest entries of it any pass showed. A call arriving between two pages of one pass shifts
 * the listing by a place and shows one call twice with nothing lost: that pass counts one entry
 * more, and a pass without the shift counts right, so the fewest entries is the true count. A time
 * first seen across a boundary in the first pass is held (it is followed through later passes,
 * wherever its calls fall); one first split by a later pass stood whole on one page before, and is
 * held from that pass on only when asked (a whole listing with no total): calls removed between
 * requests moved 7 of 8 equal times onto one page of the first pass, and the second split them, 8
 * entries, 7 calls, ok with one missing (18 of 2,000 newest-first, 20 oldest-first: helper-80). Its
 * calls listed before it was split count too, as far as they stood at a page's edge (first or last
 * time of a page): a block that filled a page before, split after, is then proved by the two.
 */
export class EdgeTies {
  /** By order key, then time (no text key made per entry: every page of a long listing is looked up). */
  readonly #groups = new Map<OrderKey, Map<number, TieGroup>>(ORDER_KEYS.map((k) => [k, new Map()]));
  /** By order key, then time: calls of the first and the last time of every page read (a later split's calls of earlier passes). */
  readonly #edges = new Map<OrderKey, Map<number, Set<string>>>(ORDER_KEYS.map((k) => [k, new Map()]));
  #held = 0;
  #pass = -1;
  #size: number | undefined;
  #previous: { ids: readonly string[]; times: readonly EntryTimes[] } | undefined;

  /**
   * A pass begins, read at `pageSize`. Read at another size than the passes before (pages found
   * capped below perPage), its boundaries are elsewhere: the groups start anew, this pass the first
   * (held before, a tie split only at the served size's boundaries went unheld, ok with 2–3 calls
   * missing: helper-62, session 29).
   */
  startPass(pageSize: number): void {
    if (pageSize !== this.#size) {
      this.#size = pageSize;
      this.#pass = -1;
      this.#held = 0;
      for (const groups of this.#groups.values()) groups.clear();
      for (const edges of this.#edges.values()) edges.clear();
    }
    this.#pass++;
    this.#previous = undefined;
  }

  /** A page read on new ground; `follows`: it is the page after the one read before it in this pass. */
  page(ids: readonly string[], times: readonly EntryTimes[], follows: boolean): void {
    const before = follows ? this.#previous : undefined;
    if (before && before.times.length > 0 && times.length > 0) {
      for (const key of ORDER_KEYS) {
        const t = times[0]![key];
        const groups = this.#groups.get(key)!;
        if (t === null || before.times[before.times.length - 1]![key] !== t || groups.has(t)) continue;
        const group: TieGroup = { entries: [], ids: new Set(this.#edges.get(key)!.get(t)), late: this.#pass > 0 };
        groups.set(t, group);
        this.#held++;
        before.times.forEach((x, i) => x[key] === t && this.#count(group, before.ids[i]!));
      }
    }
    if (this.#held > 0) {
      times.forEach((x, i) => {
        for (const key of ORDER_KEYS) {
          const t = x[key];
          const group = t === null ? undefined : this.#groups.get(key)!.get(t);
          if (group) this.#count(group, ids[i]!);
        }
      });
    }
    if (times.length > 0) {
      for (const key of ORDER_KEYS) {
        const edges = this.#edges.get(key)!;
        for (const t of new Set([times[0]![key], times[times.length - 1]![key]])) {
          if (t === null) continue;
          const set = edges.get(t) ?? edges.set(t, new Set()).get(t)!;
          times.forEach((x, i) => x[key] === t && set.add(ids[i]!));
        }
      }
    }
    this.#previous = { ids, times };
  }

  #count(group: TieGroup, id: string): void {
    group.entries[this.#pass] = (group.entries[this.#pass] ?? 0) + 1;
    group.ids.add(id);
  }

  /**
   * Why the calls of some time on `key` (the listing's order) cannot be proved listed whole; undefined when they can.
   * `late`: times first split by a later pass count too.
   */
  unproved(key: OrderKey, late = false): string | undefined {
    for (const [t, group] of this.#groups.get(key)!) {
      if (group.late && !late) continue;
      const fewest = Math.min(...group.entries.filter((n) => n > 0));
      if (group.ids.size < fewest) {
        return `List Calls showed ${fewest} entries of one ${key} (${t}) across a page boundary but ${group.ids.size} distinct calls, on every pass: calls of equal times split across pages were listed twice and others skipped, so the window cannot be proved complete`;
      }
    }
    return undefined;
  }
}
