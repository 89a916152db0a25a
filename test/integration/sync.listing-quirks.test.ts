import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_NOW, startSimulator, type AdvanceOptions, type AppTruth, type ListingQuirks, type Simulator } from '../../src/simulator/index.js';
import type { AppSyncResult } from '../../src/sync/sync-app.js';
import { branchOf, expectExactOrLoud, expectLoudNamesProblem, type Branch } from '../helpers/exact-or-loud.js';
import { syncWith, tempDir, TEST_KEY, testSettings, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

/*
 * The sync against every listing quirk of the simulator (src/simulator/README.md, Listing quirks).
 * The rule for every case and every run: the database equals the truth and the run says ok, or the
 * run says partial/failed and names the problem; never ok with data missing (expectExactOrLoud).
 * Where a correct client can get everything, the stronger: ok and exact. SQLite only; small
 * datasets. Failures are soft (expect.soft) so every run of a case is recorded, and the table of
 * which branch held is printed at the end.
 */

const APP = 'app1';
type Expectation = 'exact' | 'rule';
type Order = 'newest-first' | 'oldest-first' | 'unordered' | 'unknown';

/** One sync run of a case, with what it must achieve ('rule' = exact or loud; 'exact' = ok and exact). */
interface SyncStep {
  sync: 'incremental' | 'full';
  expect?: Expectation;
}
type Step = SyncStep | { advance: AdvanceOptions };

interface QuirkCase {
  name: string;
  quirks?: ListingQuirks;
  calls?: number;
  pageSize?: number;
  /** The dataset's now: the fixed default, or an hour before the wall clock (future calls must be future). */
  now?: 'wall';
  /** Runs after the first and the incremental sync (both held to `expect`). */
  then?: Step[];
  expect: Expectation;
  /** The listing order the sync must report on every run. */
  order?: Order;
  /** More checks after the last run. */
  check?: (sim: Simulator, db: string) => Promise<void>;
}

interface RunRecord {
  case: string;
  run: string;
  status: string;
  branch: Branch;
  diff: number;
  order: string;
  error: string;
}
const records: RunRecord[] = [];

/** Small datasets, pages of 50 (several page boundaries), a cap below the page size. */
const CALLS = 400;
const PAGE_SIZE = 50;
const CAP = 20;
const CASES: QuirkCase[] = [
  { name: 'no quirk (the reference)', expect: 'exact', order: 'newest-first' },
  { name: 'oldest first, honest meta', quirks: { order: 'oldest-first' }, expect: 'exact', order: 'oldest-first' },
  { name: 'unsorted (a fixed order not by time)', quirks: { order: 'unsorted' }, expect: 'exact', order: 'unordered' },
  { name: 'shuffled on every request', quirks: { order: 'shuffled' }, expect: 'rule', order: 'unordered' },
  { name: 'pages numbered from 0', quirks: { pageBase: 0 }, expect: 'exact' },
  { name: `pages capped at ${CAP}, per_page honest`, quirks: { perPageCap: CAP }, expect: 'exact' },
  { name: `pages capped at ${CAP}, per_page echoes the ask`, quirks: { perPageCap: CAP, perPageEcho: 'requested' }, expect: 'exact' },
  { name: `pages capped at ${CAP}, no per_page`, quirks: { perPageCap: CAP, perPageEcho: 'omit' }, expect: 'exact' },
  { name: 'no total, no total_pages', quirks: { total: 'omit', totalPages: 'omit' }, expect: 'exact' },
  { name: 'no total, total_pages or current_page', quirks: { total: 'omit', totalPages: 'omit', currentPage: 'omit' }, expect: 'exact' },
  { name: 'total jitters per request', quirks: { total: 'jitter' }, expect: 'exact' },
  { name: 'total falls on every request', quirks: { total: 'falling' }, expect: 'exact' },
  { name: 'total understated', quirks: { total: 'low' }, expect: 'rule' },
  { name: 'total overstated', quirks: { total: 'high' }, expect: 'rule' },
  { name: 'total_pages understated', quirks: { totalPages: 'low' }, expect: 'rule' },
  { name: 'total_pages overstated', quirks: { totalPages: 'high' }, expect: 'rule' },
  { name: `total_pages from the asked size under a cap of ${CAP}`, quirks: { perPageCap: CAP, totalPages: 'requested-size' }, expect: 'rule' },
  { name: 'past the end repeats the last page', quirks: { pastEnd: 'repeat-last' }, expect: 'exact' },
  { name: 'short pages 2 and 4', quirks: { shortPages: [2, 4] }, expect: 'exact' },
  { name: 'startedAt 0 for calls that never started', quirks: { startedAtZeroForUnstarted: true }, expect: 'exact' },
  {
    name: 'future calls (a service clock error)',
    quirks: { futureCalls: 3 },
    now: 'wall',
    // New and late calls below the future ones: a watermark taken from a future call would hide them.
    then: [{ advance: { newCalls: 5, backdatedCalls: { count: 2, hoursAgo: 10 } } }, { sync: 'incremental' }],
    expect: 'exact',
    check: checkFutureCalls,
  },
  // A tie group that straddles a page boundary and is reordered on every request can hide a call
  // from both passes: the total exposes it, so the run is partial naming the shortfall (exact when
  // the dice are kind). Getting it would take re-reading boundary pages until the total is reached.
  { name: 'equal startedAt, order within ties per request', quirks: { equalStartedAt: true }, expect: 'rule', check: checkTiesStraddlePages },
  {
    name: 'live calls end while paging and move down',
    quirks: { endLiveWhilePaging: { afterPage: 1 } },
    calls: 600,
    then: [{ advance: { newCalls: 3 } }, { sync: 'incremental' }],
    expect: 'rule',
  },
  {
    name: 'backdated calls within the lookback',
    then: [{ advance: { backdatedCalls: { count: 4, hoursAgo: 30 }, newCalls: 3 } }, { sync: 'incremental' }],
    expect: 'exact',
  },
  {
    name: 'backdated calls beyond the lookback',
    then: [{ advance: { backdatedCalls: { count: 4, hoursAgo: 100 } } }, { sync: 'incremental', expect: 'rule' }, { sync: 'full' }],
    expect: 'exact',
  },
  {
    name: 'a long call revealed when it ends, 10 days back',
    then: [{ advance: { revealLongCall: { startedDaysAgo: 10 }, newCalls: 2 } }, { sync: 'incremental', expect: 'rule' }, { sync: 'full' }],
    expect: 'exact',
  },
  {
    name: 'combined: pages from 0, capped, per_page echoes the ask, no total',
    quirks: { pageBase: 0, perPageCap: 15, perPageEcho: 'requested', total: 'omit' },
    expect: 'exact',
  },
  { name: 'combined: oldest first, pages from 0, short pages', quirks: { order: 'oldest-first', pageBase: 0, shortPages: [1, 3] }, expect: 'exact', order: 'oldest-first' },
  { name: 'combined: unsorted, jittering total, past end repeats', quirks: { order: 'unsorted', total: 'jitter', pastEnd: 'repeat-last' }, expect: 'exact', order: 'unordered' },
  {
    // Not 'exact' since 2026-11-28: a total falling on every request is what calls removed while the
    // listing is read look like, and among calls of equal times at page edges a removed call already
    // listed can hide one a split skipped (listing.ties-with-churn.test.ts). Nothing proves the falls
    // were of calls not yet listed here: the calls that swap places are ordered by a start time the
    // entries do not show (a call that never started shows none), so the page before the cursor, read
    // again, never holds the same times. Loud, then, every run.
    name: 'combined: equal startedAt, startedAt 0, future calls, falling total',
    quirks: { equalStartedAt: true, startedAtZeroForUnstarted: true, futureCalls: 2, total: 'falling' },
    now: 'wall',
    expect: 'rule',
    check: checkFutureCalls,
  },
  {
    name: 'combined: shuffled, capped, no total',
    quirks: { order: 'shuffled', perPageCap: CAP, total: 'omit', totalPages: 'omit' },
    expect: 'rule',
    order: 'unordered',
  },
];

describe('sync against listing quirks: exact, or loud', () => {
  let sim: Simulator | undefined;
  const tmp = tempDir('callsync-quirks-');
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });
  afterAll(() => {
    tmp.cleanup();
    const lines = records.map((r) => `${r.branch.padEnd(15)} ${r.status.padEnd(8)} diff ${String(r.diff).padStart(4)}  order ${r.order.padEnd(12)} ${r.case} / ${r.run}${r.error ? `\n${' '.repeat(48)}error: ${r.error}` : ''}`);
    console.log(`listing quirks: which branch held\n${lines.join('\n')}`);
  });

  for (const c of CASES) {
    it(c.name, async () => {
      const now = c.now === 'wall' ? Math.floor(Date.now() / 1000) - 3600 : DEFAULT_NOW;
      sim = await startSimulator({
        apps: [{ appId: APP, region: 'us', apiKey: TEST_KEY, calls: c.calls ?? CALLS, seed: 42 }],
        faults: c.quirks ? { quirks: c.quirks } : {},
        now,
      });
      const db = join(tmp.dir, `${c.name.replace(/\W+/g, '-')}.db`);
      const settings = testSettings(sim, [APP], db, { pageSize: c.pageSize ?? PAGE_SIZE });
      const steps: Step[] = [{ sync: 'full', expect: c.expect }, { sync: 'incremental', expect: c.expect }, ...(c.then ?? [])];
      let n = 0;
      for (const step of steps) {
        if ('advance' in step) {
          sim.advance(APP, step.advance);
          continue;
        }
        n++;
        // The first run has no watermark; `full` is asked for only where a case needs it later.
        const isFirst = n === 1;
        const label = `${isFirst ? 'first' : step.sync} run #${n}`;
        const r = (await syncWith(settings, step.sync === 'full' && !isFirst ? { full: true } : {})).results[0]!;
        const truth = sim.truth(APP);
        const diff = await withStore(db, (s) => diffAgainstTruth(s.db, truth));
        const order = await reportedOrder(r, db);
        records.push({ case: c.name, run: label, status: r.status, branch: branchOf(r, diff), diff: diff.length, order: `${order.result}/${order.column}`, error: r.error ?? '' });
        expectExactOrLoud(r, diff, `${c.name}, ${label}`);
        expectLoudNamesProblem(r, `${c.name}, ${label}`);
        if ((step.expect ?? c.expect) === 'exact') {
          expect.soft(r.status, `${c.name}, ${label}: a correct client gets everything here (error: ${r.error ?? 'none'})`).toBe('ok');
          expect.soft(diff.slice(0, 5), `${c.name}, ${label}: database vs truth`).toEqual([]);
        }
        if (c.order) {
          expect.soft(order.result, `${c.name}, ${label}: AppSyncResult.listingOrder`).toBe(c.order);
          expect.soft(order.column, `${c.name}, ${label}: sync_runs.listing_order`).toBe(c.order);
        }
      }
      await c.check?.(sim, db);
    });
  }
});

/** The order the run reports, in its result and in its sync_runs row ('absent' while not implemented). */
async function reportedOrder(r: AppSyncResult, db: string): Promise<{ result: string; column: string }> {
  const fromResult = (r as AppSyncResult & { listingOrder?: unknown }).listingOrder;
  const row = await withStore(db, (s) => s.db.selectFrom('sync_runs').selectAll().where('app_id', '=', APP).orderBy('id', 'desc').executeTakeFirst());
  const fromColumn = row ? (row as unknown as { [k: string]: unknown }).listing_order : undefined;
  return { result: fromResult === undefined ? 'absent' : String(fromResult), column: fromColumn === undefined ? 'absent' : String(fromColumn) };
}

/** The future calls are stored, and the watermark is not in the future (it would hide new calls). */
async function checkFutureCalls(sim: Simulator, db: string): Promise<void> {
  const wallNow = Math.floor(Date.now() / 1000);
  const future = [...sim.truth(APP).calls.values()].filter((c) => Math.max(c.startedAt ?? 0, c.initiatedAt ?? 0) > wallNow);
  expect(future.length).toBeGreaterThan(0);
  await withStore(db, async (s) => {
    const stored = await s.db.selectFrom('calls').select(['session_id', 'started_at']).where('app_id', '=', APP).where('session_id', 'in', future.map((c) => c.sessionId)).execute();
    expect.soft(stored.map((c) => c.session_id).sort(), 'the future calls are stored').toEqual(future.map((c) => c.sessionId).sort());
    const state = await s.db.selectFrom('sync_state').select('watermark_started_at').where('app_id', '=', APP).executeTakeFirst();
    expect.soft(state?.watermark_started_at ?? 0, 'sync_state.watermark_started_at is not in the future').toBeLessThanOrEqual(wallNow);
  });
}

/** The case has teeth: at least one group of equal startedAt straddles a page boundary. */
async function checkTiesStraddlePages(sim: Simulator): Promise<void> {
  expect(tiesAcrossBoundaries(sim.truth(APP), PAGE_SIZE)).toBeGreaterThan(0);
}

function tiesAcrossBoundaries(truth: AppTruth, pageSize: number): number {
  const t = [...truth.calls.values()].map((c) => c.startedAt ?? 0).sort((a, b) => b - a);
  let n = 0;
  for (let k = pageSize; k < t.length; k += pageSize) if (t[k] === t[k - 1]) n++;
  return n;
}
