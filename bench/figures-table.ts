/**
 * The bench's one table: every figure of issue 16 first, each with its target and the figure divided
 * by its target's limit (≤ 1 meets it), then the other figures (issue 6's targets, and the context
 * that explains them). A figure whose phase did not run says "not measured" and why; it is never
 * estimated.
 */
import Table from 'cli-table3';
import type { SyncRun } from './cli-sync.js';
import { MB, median } from './lib.js';
import type { QueryFigures, StorageFigures } from './optional-phases.js';
import type { MemoryRun, PacedResult, ReportsResult, ThroughputRun } from './run.js';

type Verdict = 'PASS' | 'FAIL' | 'info' | 'not run';
export interface Row {
  figure: string;
  measured: string;
  target: string;
  /** The figure divided by its target's limit: ≤ 1 meets it (for a "<" target, < 1). */
  ofTarget: number | null;
  verdict: Verdict;
}

export interface TableInput {
  settings: {
    runs: number; fullCalls: number; smallCalls: number; dbCalls: number; large: boolean; skip: ReadonlySet<string>; concurrency: number; pageSize: number;
    naiveCalls: number; naiveDefaultsCalls: number; memoryPageSize: number; freePlanCalls: number; freePlanPageSize: number; freePlanLimit: number;
    rateLimit: number; memorySmall: number; memoryLarge: number;
  };
  throughput: ThroughputRun[];
  memory: MemoryRun[];
  paced: PacedResult | undefined;
  reports: ReportsResult | undefined;
  storage: StorageFigures | undefined;
  queries: QueryFigures[];
}

const round = (x: number, d = 0): number => Math.round(x * 10 ** d) / 10 ** d;
const n = (x: number): string => x.toLocaleString('en-US');
const callsPerSec = (calls: number, ms: number): number => (calls / ms) * 1000;

/** A row with a target: `value` against `limit`, passing at ≤ (or < when strict). */
function target(figure: string, measured: string, value: number, limit: number, targetText: string, strict = false): Row {
  return { figure, measured, target: targetText, ofTarget: value / limit, verdict: (strict ? value < limit : value <= limit) ? 'PASS' : 'FAIL' };
}
const info = (figure: string, measured: string, targetText = ''): Row => ({ figure, measured, target: targetText, ofTarget: null, verdict: 'info' });
const notMeasured = (figure: string, targetText: string, why: string): Row => ({ figure, measured: `not measured (${why})`, target: targetText, ofTarget: null, verdict: 'not run' });

export function figuresTable(input: TableInput): { rows: Row[]; text: string } {
  const { settings: s, throughput: t, memory, paced, reports, storage, queries } = input;
  const skipped = (phase: string): string => `--skip ${phase}`;
  const m = (f: (r: ThroughputRun) => number): number => median(t.map(f));
  const ms = (runs: readonly SyncRun[], f: (r: SyncRun) => number): number => median(runs.map(f));
  const rows: Row[] = [];

  // --- issue 16 ---------------------------------------------------------------------------------
  const cpuFigure = `CPU per synced call (user + sys): callsync sync, detailFetch always, ${n(s.fullCalls)} calls, whole process / bare client (list + Get + JSON.parse, in-process)`;
  if (t.length) {
    const ratio = m((r) => r.cpuRatio);
    const sync = m((r) => (r.full.cpuMs * 1000) / r.full.callsSeen);
    const bound = m((r) => (r.bound.cpuMs * 1000) / r.bound.calls);
    rows.push(target(cpuFigure, `${round(ratio, 2)} × (${round(sync)} µs / ${round(bound)} µs)`, ratio, 2, `≤ 2 × (at ${n(50_000)} calls)`));
  } else rows.push(notMeasured(cpuFigure, '≤ 2 ×', skipped('throughput')));

  const small = memory.find((x) => x.calls === s.memorySmall);
  const large = memory.find((x) => x.calls === s.memoryLarge);
  const rss = (x: MemoryRun): number => ms(x.runs, (r) => r.peakRssBytes);
  const whyNoLarge = s.skip.has('memory') ? skipped('memory') : 'the 1M-call sync runs only with --large';
  if (large) rows.push(target(`peak RSS of a ${n(s.memoryLarge)}-call first sync (callsync sync, auto)`, `${round(rss(large) / MB)} MB`, rss(large) / MB, 300, '< 300 MB', true));
  else rows.push(notMeasured(`peak RSS of a ${n(s.memoryLarge)}-call first sync`, '< 300 MB', whyNoLarge));
  if (small && large) rows.push(target(`peak RSS: ${n(s.memoryLarge)}-call sync / ${n(s.memorySmall)}-call sync`, `${round(rss(large) / rss(small), 2)} × (${round(rss(large) / MB)} / ${round(rss(small) / MB)} MB)`, rss(large) / rss(small), 1.2, '≤ 1.2 ×'));
  else rows.push(notMeasured(`peak RSS: ${n(s.memoryLarge)}-call sync / ${n(s.memorySmall)}-call sync`, '≤ 1.2 ×', whyNoLarge));

  const perCallFigure = `requests per synced call, detailFetch auto, complete list entries (${n(s.freePlanCalls)} calls, pageSize ${s.freePlanPageSize})`;
  if (paced) {
    const a = paced.freePlanAuto;
    const perCall = a.sim.requests / a.callsSeen;
    rows.push(target(perCallFigure, `${round(perCall, 4)} (${a.sim.requests} requests, ${a.sim.get} Gets of live calls)`, perCall, 0.02, '≤ 0.02'));
  } else rows.push(notMeasured(perCallFigure, '≤ 0.02', skipped('paced')));

  const quietFigure = `quiet re-run / full sync (${n(s.fullCalls)} calls, always; the sync's own time as the CLI reports it)`;
  if (t.length) {
    const qf = m((r) => r.quietFraction);
    rows.push(target(quietFigure, `${round(qf * 100, 1)} % (${round(ms(t.map((r) => r.quiet), (r) => r.syncMs))} ms / ${round(m((r) => r.full.syncMs))} ms; process wall ${round(ms(t.map((r) => r.quiet), (r) => r.wallMs))} ms)`, qf, 0.05, '≤ 5 %'));
  } else rows.push(notMeasured(quietFigure, '≤ 5 %', skipped('throughput')));

  const bytesFigure = `database bytes per call at ${n(s.dbCalls)} calls (SQLite, bench/storage.ts)`;
  if (storage) rows.push(target(bytesFigure, `${n(round(storage.bytesPerCall))} bytes`, storage.bytesPerCall, 2500, `≤ ${n(2500)} (at ${n(200_000)})`));
  else rows.push(notMeasured(bytesFigure, `≤ ${n(2500)}`, skipped('storage')));

  const querySizes = s.large ? [s.dbCalls, s.memoryLarge] : [s.dbCalls];
  for (const calls of querySizes) {
    const q = queries.find((x) => x.calls === calls);
    if (!q) {
      rows.push(notMeasured(`the five finance questions at ${n(calls)} calls: public schema / lean layout`, '≤ 2 × each', skipped('queries')));
      continue;
    }
    for (const r of q.rows) rows.push(target(`${r.question} at ${n(calls)} calls: public schema / lean layout`, `${round(r.ratio, 2)} × (${round(r.publicMs, 1)} ms / ${round(r.leanMs, 1)} ms)`, r.ratio, r.target, `≤ ${r.target} ×`));
  }
  if (!s.large) rows.push(notMeasured(`the five finance questions at ${n(s.memoryLarge)} calls`, '≤ 2 × each', 'only with --large'));

  const reportFigure = (calls: number): string => `reconcile + billing export over ${n(calls)} calls (callsync, each a process)`;
  const qLarge = queries.find((x) => x.calls === s.memoryLarge);
  for (const q of queries) {
    const total = q.reconcileMs + q.exportMs;
    const measured = `${round(total / 1000, 2)} s (reconcile ${round(q.reconcileMs / 1000, 2)} s, export ${round(q.exportMs / 1000, 2)} s)`;
    rows.push(q === qLarge ? target(reportFigure(q.calls), measured, total / 1000, 3, '≤ 3 s') : info(reportFigure(q.calls), measured, '≤ 3 s at 1M'));
  }
  if (!qLarge) rows.push(notMeasured(reportFigure(s.memoryLarge), '≤ 3 s', s.skip.has('queries') ? skipped('queries') : 'only with --large'));

  const issue16 = rows.length;
  // --- the other figures ---------------------------------------------------------------------
  if (t.length) {
    rows.push(info(`bound: bare client, ${n(s.fullCalls)} calls (list + Get each, c=${s.concurrency}, pageSize ${s.pageSize})`, `${round(m((r) => r.bound.callsPerSec))} calls/s, ${round(m((r) => (r.bound.cpuMs * 1000) / r.bound.calls))} µs CPU per call`));
    rows.push(info(
      `full sync, empty db, detailFetch always, ${n(s.fullCalls)} calls (callsync sync, requestsPerMinute "unlimited")`,
      `${round(m((r) => r.full.callsPerSec))} calls/s, ${round(m((r) => r.full.syncMs) / 1000, 1)} s (process ${round(m((r) => r.full.wallMs) / 1000, 1)} s), ${round(m((r) => r.full.requests))} requests, peak RSS ${round(m((r) => r.full.peakRssBytes) / MB)} MB`,
    ));
    rows.push(info(
      "bound at the sync's pace: the bare client spinning the sync's extra CPU per call after each Get; its own CPU per call (less the spin), and the sync's over it",
      `${round(m((r) => ((r.boundAtPace.cpuMs - r.boundAtPace.busyMs) * 1000) / r.boundAtPace.calls))} µs per call at ${round(m((r) => r.boundAtPace.callsPerSec))} calls/s; ${round(m((r) => r.cpuRatioAtPace), 2)} ×`,
    ));
    rows.push(info(
      'storing alone: the same calls through the real store in-process (transactions of 1,000 calls, as the sync commits them; no HTTP), CPU per call; the sync over the bare client plus storing (1 × is the floor)',
      `${round(m((r) => (r.storeOnly.cpuMs * 1000) / r.storeOnly.calls))} µs; ${round(m((r) => r.cpuRatioOverFloor), 2)} ×`,
    ));
    rows.push(info(
      `one more call: the CPU per call between ${n(s.smallCalls)} and ${n(s.fullCalls)} calls, sync / bare client (what each process pays once cancels out); the rest of each one's CPU at ${n(s.fullCalls)} calls (the sync's from exec, the bare client's after its modules load)`,
      `${round(m((r) => r.marginal.syncUs))} µs / ${round(m((r) => r.marginal.boundUs))} µs: ${round(m((r) => r.marginal.ratio), 2)} ×; the rest ${round(m((r) => r.marginal.syncFixedMs) / 1000, 2)} s / ${round(m((r) => r.marginal.boundFixedMs) / 1000, 2)} s`,
    ));
    rows.push(info('simulator CPU per call meanwhile: beside the bound / beside the sync', `${round(m((r) => (r.bound.simCpuMs * 1000) / r.bound.calls))} µs / ${round(m((r) => (r.full.simCpuMs * 1000) / r.full.callsSeen))} µs`));
    const quietGets = Math.max(...t.map((r) => r.quiet.sim.get));
    const q = t.map((r) => r.quiet);
    rows.push({ figure: 'quiet re-run: requests by kind', measured: `${ms(q, (r) => r.sim.list)} list, ${quietGets} get, ${ms(q, (r) => r.sim.members)} members`, target: '0 Get Call', ofTarget: null, verdict: quietGets === 0 ? 'PASS' : 'FAIL' });
    const o = t.map((r) => r.onePercent);
    rows.push(info(
      `1 % new re-run (${o[0]?.added ?? 0} new calls): requests; its time / full sync`,
      `${ms(o, (r) => r.sim.list)} list, ${ms(o, (r) => r.sim.get)} get, ${ms(o, (r) => r.sim.members)} members; ${round(m((r) => r.onePercentFraction) * 100, 1)} % (${round(ms(o, (r) => r.syncMs))} ms)`,
    ));
    rows.push(info(`naive loop (sequential Get + one autocommit insert per row; ${n(s.naiveCalls)} calls, WAL / ${n(s.naiveDefaultsCalls)} calls, SQLite defaults)`, `${round(m((r) => r.naive.callsPerSec))} / ${round(m((r) => r.naiveDefaults.callsPerSec), 1)} calls/s; the full sync is ${round(m((r) => r.multipleOfNaive), 1)} × / ${round(m((r) => r.multipleOfNaiveDefaults), 1)} × that`));
  }
  for (const x of memory) {
    rows.push(info(`peak RSS of a ${n(x.calls)}-call first sync (callsync sync, auto, pageSize ${s.memoryPageSize})`, `${round(rss(x) / MB)} MB (${round(ms(x.runs, (r) => r.syncMs) / 1000, 1)} s, ${round(ms(x.runs, (r) => callsPerSec(r.callsSeen, r.syncMs)))} calls/s, ${round(ms(x.runs, (r) => (r.cpuMs * 1000) / r.callsSeen))} µs CPU per call)`));
  }
  if (paced) {
    const rl = paced.rateLimited;
    rows.push(target(`rate-limited: ${s.rateLimit}/min enforced, ${rl.sim.requests} requests in ${round(rl.syncMs / 1000, 1)} s (share of the limit used; 429s)`, `${round(rl.usedFraction * 100, 1)} %, ${rl.sim.http429} × 429`, rl.sim.http429 === 0 ? 0.95 / rl.usedFraction : Infinity, 1, '≥ 95 %, 0 × 429'));
    const a = paced.freePlanAuto;
    rows.push(target(`first ${n(s.freePlanCalls)}-call sync at ${s.freePlanLimit}/min enforced, auto, complete entries`, `${round(a.syncMs / 1000, 1)} s: ${a.sim.list} list, ${a.sim.get} get, ${a.sim.members} members; ${a.sim.http429} × 429`, a.sim.http429 === 0 ? a.syncMs / 1000 : Infinity, 60, '< 60 s', true));
    const v = paced.freePlanVaried;
    rows.push(info(`the same, auto, when 5 % of list entries omit participants (computed: requests ÷ ${s.freePlanLimit}/min)`, `${v.sim.requests} requests (${round(v.sim.requests / v.callsSeen, 4)} per call; ${v.sim.get} Gets) → ${round(v.sim.requests / s.freePlanLimit, 1)} min`));
    const w = paced.freePlanAlways;
    rows.push(info(`the same, always (computed: requests ÷ ${s.freePlanLimit}/min)`, `${w.sim.requests} requests (${round(w.sim.requests / w.callsSeen, 3)} per call) → ${round(w.sim.requests / s.freePlanLimit, 1)} min`));
  }
  if (reports) {
    rows.push(info(`reconcile + billing export over the synced ${n(reports.calls)}-call database`, `${round(median(reports.totalMs) / 1000, 2)} s (reconcile ${round(median(reports.reconcileMs) / 1000, 2)} s, export ${round(median(reports.exportMs) / 1000, 2)} s)`));
  }

  const table = new Table({ head: ['figure', 'measured (median)', 'target', '÷ target', ''], style: { head: [], border: [] }, colWidths: [56, 50, 16, 10, 9], wordWrap: true });
  table.push([{ colSpan: 5, content: 'issue 16: each figure with its target; "÷ target" is the figure over the target\'s limit (≤ 1 meets it)' }]);
  rows.forEach((r, i) => {
    if (i === issue16) table.push([{ colSpan: 5, content: 'other figures (issue 6 targets, and what explains the figures above)' }]);
    table.push([r.figure, r.measured, r.target, r.ofTarget === null ? '' : Number.isFinite(r.ofTarget) ? round(r.ofTarget, 2).toFixed(2) : '∞', r.verdict]);
  });
  return { rows, text: `${table.toString()}\n` };
}
