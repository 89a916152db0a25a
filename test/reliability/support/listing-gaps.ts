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
  perPageTotal: (s: number): Scenario => ({ pageSize: sizeOf(s), fake: { calls: sizeOf(s) * 4 + (s % 7), tiedBlock: tiesAt(s, sizeOf(s), sizeOf(s) * 4 + (s % 7)), rewriteList: ({ data, pagination }) => ({ data, pagination: { ...pagination, total: data.length } }) } }),
};
