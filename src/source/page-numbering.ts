import { ApiError } from './errors.js';
import { entryIds, sameIds } from './listing-evidence.js';

/** A page of a listing, as far as its numbering is concerned. */
export interface NumberedPage {
  entries: readonly unknown[];
  pagination?: { current_page?: number | undefined } | undefined;
}

/** The first pages of a listing and how the service numbers its pages. */
export interface FirstPages<P> {
  /** The number of the listing's first page. */
  base: 0 | 1;
  /** The pages read to find out, by the number they were asked with, in listing order. */
  pages: { requested: number; res: P }[];
  /**
   * What page 0 answered: `counted` (entries, `current_page: 0`), `refused` (a 4xx), `empty`, `same`
   * (page 1's entries), `differs` (entries of its own: read as the first page). `refused`, and `empty`
   * or `same` beside a page 1 with entries, say how the server numbers pages, not only this listing
   * (see member-paging.ts).
   */
  pageZero: 'counted' | 'refused' | 'empty' | 'same' | 'differs';
}

/**
 * Whether two answers are the same page: the same ids, or mostly the same shifted by a few (entries
 * that arrived between the two requests push the page down; asked twice a minute apart, a busy
 * service's first page is rarely identical). Two different pages share at most an entry or two.
 */
function samePage(a: readonly string[], b: readonly string[]): boolean {
  if (sameIds(a, b)) return true;
  const inB = new Set(b);
  let shared = 0;
  for (const id of a) if (inB.has(id)) shared++;
  return shared > 0 && shared * 2 >= Math.min(a.length, b.length);
}

/** A server counting from 1 may refuse page 0 with a 4xx; anything else is what it is. */
function refusesPageZero(err: unknown): boolean {
  return err instanceof ApiError && (err.kind === 'client' || err.kind === 'not_found') && err.status !== undefined && err.status >= 400 && err.status < 500;
}

/**
 * How a listing's pages are numbered, never assumed (api-facts.md: one overview says `current_page`
 * defaults to 0, the examples count from 1; asked for page 1, a server counting from 0 answers its
 * second page, and the first page's entries are never seen). Page 0 is asked first:
 * - with entries and `current_page` 0, the server says it counts from 0;
 * - otherwise page 1 is asked too: page 0 refused, empty, or the same entries as page 1 is a
 *   server counting from 1 (an empty page 0 that says `current_page: 0` may be an echo of the
 *   request: believed, it ended a listing before its first page); different entries, from 0 (its
 *   page 0 is read as the listing's first page, and whatever it repeats is counted once).
 * On a server counting from 1 this costs one request per listing (page 0). `idKey` names the
 * entries' id field.
 */
export async function firstPages<P extends NumberedPage>(list: (page: number) => Promise<P>, idKey: string): Promise<FirstPages<P>> {
  let zero: P | undefined;
  try {
    zero = await list(0);
  } catch (err) {
    if (!refusesPageZero(err)) throw err;
  }
  if (zero !== undefined && zero.entries.length > 0 && zero.pagination?.current_page === 0) return { base: 0, pages: [{ requested: 0, res: zero }], pageZero: 'counted' };
  // Page 0 answered `current_page: 1` is not believed to be page 1 without asking for page 1: a
  // server computing its offset as (page - 1) × perPage in JavaScript (slice(-100)) answers page 0
  // with its last entries and echoes max(page, 1); believed, the first page was never asked and the
  // newest 100 of 250 calls were missing on every run, ok, without a total (probe round 9, F4).
  const one = await list(1);
  // Entries without a readable id compare by their place and text (entryIds).
  if (zero === undefined) return { base: 1, pages: [{ requested: 1, res: one }], pageZero: 'refused' };
  if (zero.entries.length === 0) return { base: 1, pages: [{ requested: 1, res: one }], pageZero: 'empty' };
  if (samePage(entryIds(zero.entries, idKey), entryIds(one.entries, idKey))) return { base: 1, pages: [{ requested: 1, res: one }], pageZero: 'same' };
  return { base: 0, pages: [{ requested: 0, res: zero }, { requested: 1, res: one }], pageZero: 'differs' };
}
