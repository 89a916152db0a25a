import type { DetailState } from './detail-state.js';
import type { PageGeometry } from './quirks.js';

/**
 * duplicateEntries: a call listed twice. In a serving order the second entry of call i is written
 * as -(i + 1) (indices are >= 0), and bodyOf serves it with the other part of the participants.
 */
export function secondEntry(index: number): number {
  return -(index + 1);
}

/** The call an entry of a serving order stands for. */
export function entryIndex(entry: number): number {
  return entry < 0 ? -entry - 1 : entry;
}

/** Listing position where the page after the one holding `position` starts. */
function nextPageStart(geo: PageGeometry, position: number): number {
  let k = 0;
  while (geo.offsetOf(k + 1) <= position) k++;
  return geo.offsetOf(k + 1);
}

/**
 * The serving order with every duplicated call listed twice: a call of even ordinal has its second
 * entry right after the first (the same page, unless the first ends a page); one of odd ordinal has
 * it open the next page, so that a client sees the two halves on adjacent pages.
 */
export function withDuplicates(order: readonly number[], geo: PageGeometry, details: DetailState): number[] {
  const out: number[] = [];
  const deferred: { at: number; entry: number }[] = [];
  const flush = (): void => {
    while (deferred.length > 0 && (deferred[0]?.at ?? 0) <= out.length) out.push(deferred.shift()?.entry ?? 0);
  };
  for (const i of order) {
    flush();
    out.push(i);
    if (!details.isDuplicated(i)) continue;
    if (details.duplicateOrdinal(i) % 2 === 0) out.push(secondEntry(i));
    else deferred.push({ at: nextPageStart(geo, out.length - 1), entry: secondEntry(i) });
  }
  for (const d of deferred) out.push(d.entry);
  return out;
}
