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
}

/** A server counting from 1 may refuse page 0 with a 4xx; anything else is what it is. */
function refusesPageZero(err: unknown): boolean {
  return err instanceof ApiError && (err.kind === 'client' || err.kind === 'not_found') && err.status !== undefined && err.status >= 400 && err.status < 500;
}

/**
 * How a listing's pages are numbered, never assumed (api-facts.md: one overview says `current_page`
 * defaults to 0, the examples count from 1; asked for page 1, a server counting from 0 answers its
 * second page, and the first page's entries are never seen). Page 0 is asked first:
 * - with entries and `current_page` 0 or 1, the server says which page it answered;
 * - otherwise page 1 is asked too: page 0 refused, empty, or the same entries as page 1 is a
 *   server counting from 1 (an empty page 0 that says `current_page: 0` may be an echo of the
 *   request: believed, it ended a listing before its first page); different entries, from 0.
 * On a server that answers page 0 as page 1 and says so (the simulator) this costs nothing; on one
 * that refuses page 0, one request per listing. `idKey` names the entries' id field.
 */
export async function firstPages<P extends NumberedPage>(list: (page: number) => Promise<P>, idKey: string): Promise<FirstPages<P>> {
  let zero: P | undefined;
  try {
    zero = await list(0);
  } catch (err) {
    if (!refusesPageZero(err)) throw err;
  }
  if (zero !== undefined && zero.entries.length > 0) {
    const current = zero.pagination?.current_page;
    if (current === 0) return { base: 0, pages: [{ requested: 0, res: zero }] };
    if (current === 1) return { base: 1, pages: [{ requested: 1, res: zero }] };
  }
  const one = await list(1);
  if (zero === undefined || zero.entries.length === 0 || sameIds(entryIds(zero.entries, idKey, 0), entryIds(one.entries, idKey, 1))) {
    return { base: 1, pages: [{ requested: 1, res: one }] };
  }
  return { base: 0, pages: [{ requested: 0, res: zero }, { requested: 1, res: one }] };
}
