#!/usr/bin/env node
// A randomized search for listings that end "complete" with a call missing: CallListing (the built
// one, dist/) against a small in-process model of List Calls whose calls come and go while it is
// read, with a block of calls of equal times whose order flips per request. Not a test (the tests
// run the sync over HTTP against test/reliability/support/fake-calls-service.ts); it finds the cases
// the tests then pin. Run after `npm run build`:
//   node scripts/search-listing-churn.mjs [cases] [--mode seen|any|bottom|retain|arrive|insert|none]
//        [--oldest] [--no-ties] [--total honest|absent|high|low|jitter|stale|decreasing|page]
//        [--pages honest|lie|absent] [--from N] [--quiet]
// --total: what `total` states while the calls churn (high/low: off by 1..12, fixed per seed; jitter:
// ±2 per request; stale: the count one request behind; decreasing: 6, 5, … above the count; page:
// the page's own count). --pages: total_pages from the real count, from the stated total, or absent.
// Prints the first failing seeds and a tally: bad (complete, a call missing), partial, ok. Whole
// listings only: a window's proof is the sync's, against the database (sync/incremental-proof.ts).
import { CallListing } from '../dist/src/source/paginate-calls.js';

const args = process.argv.slice(2);
const cases = Number(args.find((a) => /^\d+$/.test(a)) ?? 2000);
const flag = (name) => args.includes(name);
const mode = args.includes('--mode') ? args[args.indexOf('--mode') + 1] : 'seen'; // was args[indexOf + 1]: with no --mode, args[0] (the case count), i.e. no churn at all
const sign = flag('--oldest') ? -1 : 1;
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const totalMode = opt('--total', 'honest'), pagesMode = opt('--pages', 'honest'), from = Number(opt('--from', 1));
if (!['honest', 'absent', 'high', 'low', 'jitter', 'stale', 'decreasing', 'page'].includes(totalMode) || !['honest', 'lie', 'absent'].includes(pagesMode)) throw new Error('bad --total/--pages');

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0), s / 2 ** 32);
}

let bad = 0, partial = 0, ok = 0;
for (let seed = from; seed < from + cases; seed++) {
  const r = rng(seed);
  const n = 30 + Math.floor(r() * 60), per = [5, 7, 10][Math.floor(r() * 3)];
  const tieAt = Math.floor(r() * (n - 10)), tieSize = flag('--no-ties') ? 1 : 2 + Math.floor(r() * 8);
  let calls = Array.from({ length: n }, (_, i) => ({ id: 'c' + String(i).padStart(4, '0'), t: 1_700_000_000 - i * 100 }));
  for (let i = tieAt; i < tieAt + tieSize && i < n; i++) calls[i].t = calls[tieAt].t;
  const initial = new Set(calls.map((c) => c.id));
  const churnAt = new Set(Array.from({ length: 1 + Math.floor(r() * 3) }, () => 1 + Math.floor(r() * (n / per + 1))));
  const alternate = r() < 0.5;
  const seen = new Set();
  let req = 0;
  // The lie draws from its own stream, so --total honest --pages honest reads exactly as before.
  const lr = rng(seed * 7919 + 17), off = 1 + Math.floor(lr() * 12);
  let previous; // the count at the request before (stale)
  const stated = (count, served) => {
    const t = { honest: count, absent: undefined, high: count + off, low: Math.max(0, count - off), jitter: Math.max(0, count + Math.floor(lr() * 5) - 2), stale: previous ?? count, decreasing: count + Math.max(0, 6 - req), page: served }[totalMode];
    previous = count;
    return t;
  };
  const churn = () => {
    if (mode === 'seen') {
      const listed = [...seen].filter((id) => calls.some((c) => c.id === id));
      const id = listed[Math.floor(r() * listed.length)];
      if (id) calls = calls.filter((c) => c.id !== id);
    } else if (mode === 'any') calls.splice(Math.floor(r() * calls.length), 1);
    else if (mode === 'bottom' || mode === 'retain') {
      calls.pop(); // the oldest
      if (mode === 'retain') calls.unshift({ id: `n${req}`, t: calls[0].t + 100 });
    } else if (mode === 'arrive') calls.unshift({ id: `a${req}`, t: calls[0].t + 100 });
    else if (mode === 'insert') {
      const k = Math.floor(r() * calls.length);
      calls.splice(k, 0, { id: `i${req}`, t: calls[Math.max(0, k - 1)].t });
    }
  };
  const api = {
    async listCalls(page, perPage) {
      req++;
      if (mode !== 'none' && churnAt.has(req) && seen.size > 0) churn();
      const flip = alternate ? (req % 2 === 0 ? -1 : 1) : r() < 0.5 ? -1 : 1;
      const sorted = [...calls].sort((a, b) => sign * (b.t - a.t) || flip * (a.id < b.id ? -1 : 1));
      const rows = page === 0 ? sorted.slice(0, perPage) : sorted.slice((page - 1) * perPage, page * perPage);
      for (const c of rows) seen.add(c.id);
      if (flag('--trace')) console.log(req, 'page', page, 'of', calls.length, rows.map((c) => c.id.slice(-3) + (c.t === calls[tieAt]?.t ? '*' : '')).join(' '));
      const entries = rows.map((c) => ({ sessionId: c.id, initiatedAt: c.t, startedAt: c.t + 1, endedAt: c.t + 50, status: 'ended' }));
      const total = stated(calls.length, entries.length);
      const pagination = { count: entries.length, per_page: perPage, current_page: page === 0 ? 1 : page };
      if (total !== undefined) pagination.total = total;
      if (pagesMode === 'honest') pagination.total_pages = Math.ceil(calls.length / perPage);
      else if (pagesMode === 'lie') pagination.total_pages = totalMode === 'page' ? 1 : Math.ceil((total ?? calls.length) / perPage);
      return { entries, pagination };
    },
  };
  const listing = new CallListing(api, per);
  const got = new Set();
  try {
    for await (const p of listing.pages()) for (const e of p.entries) got.add(e.sessionId);
  } catch {
    partial++;
    continue;
  }
  const o = listing.outcome();
  if (flag('--trace')) console.log(o);
  const missing = calls.filter((c) => initial.has(c.id) && !got.has(c.id)).map((c) => c.id);
  if (o.complete && missing.length) {
    if (++bad <= 5 && !flag('--quiet')) console.log('bad: seed', seed, { n, per, tieAt, tieSize, missing });
  } else if (!o.complete) partial++;
  else ok++;
}
console.log({ bad, partial, ok });
