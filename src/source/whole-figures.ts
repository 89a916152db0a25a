/**
 * Which of a service's figures a listing of this run showed to count a whole listing, not a page:
 * a `total` above a page's own count, or a `total_pages` above 1, that the listing then read in
 * full. A short first page is believed by its figures only then (see ListingEnd).
 */
export interface WholeFigures {
  total: boolean;
  pages: boolean;
}

export const NO_WHOLE_FIGURES: WholeFigures = { total: false, pages: false };
