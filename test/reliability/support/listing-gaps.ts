import { join } from 'node:path';
import { syncWith, tempDir, withStore } from '../../helpers/harness.js';
import { FakeCallsService, type FakeOptions } from './fake-calls-service.js';
import { settingsAt } from './matrix.js';

/**
 * Whole listings that a hostile probe (session 24, helper-55) found `ok` with a call missing that
 * the service held for the whole run (closed in session 25: listing.totals-and-repeats). Each
 * scenario makes a fake for a seed; `misses` runs the sync on each seed and counts runs ok with
 * such a call missing.
 */
export const tmp = tempDir('callsync-listing-gaps-');

export interface Scenario {
  fake: FakeOptions;
  pageSize: number;
}

/** Runs ok with a call missing that the service held at the run's start and end; one line for each. */
export async function misses(name: string, make: (seed: number) => Scenario, seeds: readonly number[]): Promise<string[]> {
  const out: string[] = [];
  for (const seed of seeds) {
    const { fake, pageSize } = make(seed);
    const service = await FakeCallsService.start({ ongoing: 0, seed, ...fake });
    try {
      const start = new Set(service.calls.map((c) => c.sessionId));
      const database = join(tmp.dir, `${name}-${seed}.db`);
      const settings = settingsAt(service.baseUrls('app1'), database, { pageSize, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 });
      const r = (await syncWith(settings)).results[0]!;
      const stored = await withStore(database, async ({ db }) => new Set((await db.selectFrom('calls').select('session_id').execute()).map((x) => x.session_id)));
      const missing = service.calls.filter((c) => start.has(c.sessionId) && !stored.has(c.sessionId));
      if (r.status === 'ok' && missing.length > 0) out.push(`seed ${seed}: ok, listed ${r.listedDistinct}, total ${r.reportedTotal}, service ${service.calls.length}, ${missing.length} missing`);
    } finally {
      await service.close();
    }
  }
  return out;
}

/** A total one request behind (a cached count): each answer states the count as the previous request found it. */
export function laggingTotal(): FakeOptions['rewriteList'] {
  let previous: number | undefined;
  return ({ data, pagination }) => {
    const now = pagination.total as number;
    const said = previous ?? now;
    previous = now;
    return { data, pagination: { ...pagination, total: said } };
  };
}

const sizeOf = (s: number): number => [10, 20, 25][s % 3]!;
/** A block of equal times near a page edge, ordered by a coin per request. */
const tiesAt = (s: number, ps: number, calls: number): FakeOptions['tiedBlock'] => ({ at: Math.min(calls - 8, ps * (1 + (s % 3)) - 3 - (s % 4)), size: 4 + (s % 6), ties: 'random' });

/** The probe's scenarios, by name (listing.totals-and-repeats runs each over seeds). */
export const PROBE_SCENARIOS = {
  // F2: a page repeats the previous page's last call and skips one while a call arrives below the
  // cursor: the total is right, and the repeat was taken for an arrival above it (riseAbove).
  repeatAndSkipWithInsertBelow: (s: number): Scenario => {
    const ps = sizeOf(s);
    const k = 1 + (s % 3);
    let done = false;
    return { pageSize: ps, fake: { calls: ps * 4 + (s % 7), overlapAt: k, beforeList: (svc, index, size) => {
      if (index !== k || done) return;
      done = true;
      const below = [...svc.calls].sort((a, b) => b.initiatedAt - a.initiatedAt)[(k + 1) * size + 3];
      if (below) svc.addCall({ at: below.initiatedAt - 1, status: 'ended' });
    } } };
  },
  // F3: one listed call removed above the cursor and one inserted below it between the same two
  // requests: `total` stays level, and the distinct count (one above it) was not questioned.
  removalAndInsertLevelTotal: (s: number): Scenario => ({ pageSize: sizeOf(s), fake: { calls: sizeOf(s) * 4 + (s % 7), insertWhileListing: 1 + (s % 2), deleteWhileListing: 1 + (s % 2) } }),
  removalAndInsertAmongTies: (s: number): Scenario => ({ pageSize: sizeOf(s), fake: { calls: sizeOf(s) * 4 + (s % 7), insertWhileListing: 1 + (s % 2), deleteWhileListing: 1 + (s % 2), tiedBlock: tiesAt(s, sizeOf(s), sizeOf(s) * 4 + (s % 7)) } }),
  // F4: `total` is each page's own row count, calls of equal times at a page edge: a count far
  // above the total was never questioned.
  // Session 29: with no total (or one read as absent), ties ordered anew on each request split
  // across a page boundary: both passes skipped the same call, ok, 1 missing (seeds 13, 15, 26; with
  // no total_pages either, seed 1).
  noTotalAmongTies: (s: number): Scenario => ({ pageSize: sizeOf(s), fake: { calls: sizeOf(s) * 4 + (s % 7), total: 'absent', ...(s % 2 ? { totalPages: 'absent' as const } : {}), tiedBlock: tiesAt(s, sizeOf(s), sizeOf(s) * 4 + (s % 7)) } }),
  // Session 29 (helper-62): pages capped at 20 of 50 with offsets by 50, per-page totals, ties
  // ordered anew at a 20-boundary: the one pass read at the served size had its boundary ties
  // unheld (EdgeTies held the first pass's, read at 50): ok, 2–3 missing (8 of 30). EdgeTies now
  // starts anew with a pass read at another size.
  cappedPerPageTotalsAmongTies: (s: number): Scenario => ({ pageSize: 50, fake: {
    calls: 150 + (s % 7), cap: 20, offsetByRequested: true, total: 'page', tiedBlock: { at: 20 * (3 + (s % 3)) - 3, size: 4 + (s % 6), ties: 'random' },
  } }),
  // The same cause with no total at all, a cap beginning mid-listing (7 of 30, before session 29).
  capMidListingNoTotalAmongTies: (s: number): Scenario => ({ pageSize: 50, fake: {
    calls: 298, total: 'absent', cap: 30, capAfterRequests: 2 + (s % 3), offsetByRequested: true, tiedBlock: { at: 30 * (3 + (s % 3)) - 3, size: 4 + (s % 6), ties: 'random' },
  } }),
  perPageTotal: (s: number): Scenario => ({ pageSize: sizeOf(s), fake: { calls: sizeOf(s) * 4 + (s % 7), tiedBlock: tiesAt(s, sizeOf(s), sizeOf(s) * 4 + (s % 7)), rewriteList: ({ data, pagination }) => ({ data, pagination: { ...pagination, total: data.length } }) } }),
};

/** The fake's newest-first order (ties by sessionId ascending). */
const newest = (svc: FakeCallsService): FakeCallsService['calls'] => [...svc.calls].sort((a, b) => b.initiatedAt - a.initiatedAt || (a.sessionId < b.sessionId ? -1 : 1));
/** A time strictly between positions p-1 and p of a newest-first list. */
const timeAt = (list: FakeCallsService['calls'], p: number): number => {
  const lo = list[p]?.initiatedAt ?? list[list.length - 1]!.initiatedAt - 100;
  const hi = list[p - 1]?.initiatedAt ?? lo + 100;
  return Math.floor((lo + hi) / 2) === lo ? lo : Math.floor((lo + hi) / 2);
};
const remove = (svc: FakeCallsService, c: FakeCallsService['calls'][number] | undefined): void => {
  if (c) svc.calls.splice(svc.calls.indexOf(c), 1);
};
const once = (): ((cond: boolean) => boolean) => {
  let done = false;
  return (cond) => (cond && !done ? ((done = true), true) : false);
};
const now = (): number => Math.floor(Date.now() / 1000);

/**
 * Known gaps (hostile probe, session 25, helper-57): whole listings still ok with a call missing.
 * listing.known-gaps runs them only with CALLSYNC_GAPS=1; each lists seeds that fail today.
 */
export const KNOWN_GAPS: Record<string, { seeds: number[]; make: (s: number) => Scenario }> = {
  // A call listed on a page after the first removed, and one added below the cursor, between the same
  // two requests: `total` level, the count exact, the shift skipped a call (60 of 60 ok with it missing,
  // with the fake's own options). One pass cannot see it; the next full listing stores the call.
  removalAboveInsertBelow: { seeds: [1, 2, 3], make: (s) => ({ pageSize: sizeOf(s), fake: { calls: sizeOf(s) * 5 + (s % 7), insertWhileListing: 3, deleteBeforePage: 3 + (s % 2) } }) },
  // The same read oldest first: a read call removed while a call arrives at the end (60 of 60).
  oldestFirstRemovalAndArrival: { seeds: [1, 2, 3], make: (s) => {
    const ps = sizeOf(s);
    const k = 2 + (s % 3);
    const go = once();
    return { pageSize: ps, fake: { calls: ps * 5 + (s % 7), order: 'oldest', beforeList: (svc, index, size) => {
      if (!go(index === k)) return;
      remove(svc, newest(svc).reverse()[(k - 1) * size + (s % size)]);
      svc.addCall({ at: now() - 30, status: 'ended' });
    } } };
  } },
  // A page served a row off (overlapAt) with a call inserted below, after a head arrival that a removal
  // kept `total` level for: the arrival, new on the first page read again, explains the repeat (60 of 60).
  rowOffExplainedByAnArrival: { seeds: [1, 2, 3], make: (s) => {
    const ps = sizeOf(s);
    const k = 3 + (s % 2);
    const first = once();
    const second = once();
    return { pageSize: ps, fake: { calls: ps * 5 + (s % 7), overlapAt: k, beforeList: (svc, index, size) => {
      if (first(index === 2)) {
        remove(svc, newest(svc)[size + (s % size)]);
        svc.addCall({ at: now() - 30, status: 'ended' });
      }
      if (second(index === k)) svc.addCall({ at: timeAt(newest(svc), (k + 1) * size + 3), status: 'ended' });
    } } };
  } },
  // No total: a listed call three places above page 3 (or 4) removed before each request of that
  // page, on both passes: nothing can show it without a count (30 of 30 ok with 1 missing).
  removalBeforeSamePageNoTotal: { seeds: [1, 2, 3], make: (s) => {
    let left = 3;
    const index = 2 + (s % 2);
    return { pageSize: sizeOf(s), fake: { calls: sizeOf(s) * 5 + (s % 7), total: 'absent', beforeList: (svc, i, size) => {
      if (i !== index || left <= 0) return;
      const victim = newest(svc)[index * size - 3];
      if (victim) {
        left--;
        remove(svc, victim);
      }
    } } };
  } },
  // `total` off by up to 3 either way on every answer, a listed call removed: the fall is lost in the
  // noise (4 of 60).
  jitteringTotalRemoval: { seeds: [5, 17, 19, 28], make: (s) => ({ pageSize: sizeOf(s), fake: {
    calls: sizeOf(s) * 5 + (s % 7), deleteBeforePage: 2 + (s % 3),
    rewriteList: ({ data, pagination, request }) => ({ data, pagination: { ...pagination, total: (pagination.total as number) + ((((request * 2654435761) ^ (s * 40503)) >>> 0) % 7) - 3 } }),
  } }) },
};
