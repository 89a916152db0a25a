import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_NOW, startSimulator, type FaultProfile, type ListingQuirks, type Simulator } from '../../src/simulator/index.js';

// Every quirk over real HTTP (plain fetch, not callsync's client): what each says it does, and that
// the truth follows.

const KEY = 'k';
const APP = 'q';
const N = 600;

interface Pagination {
  total?: number;
  count: number;
  per_page?: number;
  current_page?: number;
  total_pages?: number;
}
interface Entry {
  sessionId: string;
  startedAt?: unknown;
  status: string;
  [k: string]: unknown;
}
interface Page {
  data: Entry[];
  meta: { pagination: Pagination };
}

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(quirks: ListingQuirks | undefined, calls = N, extra: FaultProfile = {}): Promise<Simulator> {
  sim = await startSimulator({ apps: [{ appId: APP, region: 'us', apiKey: KEY, calls, seed: 21 }], faults: { ...extra, ...(quirks ? { quirks } : {}) } });
  return sim;
}

async function text(s: Simulator, query: string): Promise<string> {
  const res = await fetch(`${s.baseUrls(APP).callsBaseUrl}/calls${query}`, { headers: { apikey: KEY } });
  expect(res.status).toBe(200);
  return res.text();
}

async function page(s: Simulator, query: string): Promise<Page> {
  return JSON.parse(await text(s, query)) as Page;
}

async function getCall(s: Simulator, id: string): Promise<{ status: number; call: Entry | undefined }> {
  const res = await fetch(`${s.baseUrls(APP).callsBaseUrl}/calls/${encodeURIComponent(id)}`, { headers: { apikey: KEY } });
  if (res.status !== 200) return { status: res.status, call: undefined };
  const { data } = (await res.json()) as { data: Entry | Entry[] };
  return { status: 200, call: Array.isArray(data) ? data[0] : data };
}

/** Pages from `first` until an empty page (bounded). */
async function listAll(s: Simulator, perPage: number, first = 1): Promise<Entry[]> {
  const out: Entry[] = [];
  for (let p = first; p < first + 200; p++) {
    const { data } = await page(s, `?page=${p}&perPage=${perPage}`);
    if (data.length === 0) return out;
    out.push(...data);
  }
  throw new Error('listing never ended');
}

const ids = (es: readonly Entry[]): string[] => es.map((e) => e.sessionId);
const starts = (es: readonly Entry[]): number[] => es.map((e) => e.startedAt as number);

describe('listing quirks', () => {
  it('quirks: {} answers byte for byte like no quirks (the plain path is the reference)', async () => {
    const plain = await start(undefined);
    const queries = ['', '?page=0', '?page=2&perPage=70', '?page=9&perPage=70', '?page=99', '?perPage=5000', '?page=x&perPage=-3'];
    const expected = await Promise.all(queries.map((q) => text(plain, q)));
    await plain.close();
    const quirky = await start({});
    for (const [k, q] of queries.entries()) expect(await text(quirky, q)).toBe(expected[k]);
  });

  it('pageBase 0: page=0 is the first page, page=1 the second, current_page echoes the 0-based number', async () => {
    const plain = await start(undefined);
    const p1 = await page(plain, '?page=1&perPage=50');
    const p2 = await page(plain, '?page=2&perPage=50');
    await plain.close();
    const s = await start({ pageBase: 0 });
    const z0 = await page(s, '?page=0&perPage=50');
    const z1 = await page(s, '?page=1&perPage=50');
    expect(ids(z0.data)).toEqual(ids(p1.data));
    expect(ids(z1.data)).toEqual(ids(p2.data));
    expect(z0.meta.pagination.current_page).toBe(0);
    expect(z1.meta.pagination.current_page).toBe(1);
    expect(ids((await page(s, '?perPage=50')).data)).toEqual(ids(p1.data));
    const all = await listAll(s, 50, 0);
    expect(new Set(ids(all))).toEqual(new Set(s.truth(APP).calls.keys()));
    expect(all).toHaveLength(N);
  });

  it("order 'oldest-first' serves every call once, startedAt ascending", async () => {
    const s = await start({ order: 'oldest-first' });
    const all = await listAll(s, 100);
    expect(all).toHaveLength(N);
    expect(new Set(ids(all))).toEqual(new Set(s.truth(APP).calls.keys()));
    const t = starts(all);
    for (let k = 1; k < t.length; k++) expect(t[k]).toBeGreaterThanOrEqual(t[k - 1] ?? 0);
  });

  it("order 'unsorted' is one fixed order, not by time; 'shuffled' differs per request", async () => {
    const s = await start({ order: 'unsorted' });
    const a = await listAll(s, 100);
    const b = await listAll(s, 100);
    expect(ids(a)).toEqual(ids(b));
    expect(new Set(ids(a)).size).toBe(N);
    const t = starts(a);
    const descents = t.filter((x, k) => k > 0 && x < (t[k - 1] ?? 0)).length;
    expect(descents).toBeGreaterThan(N / 4);
    expect(descents).toBeLessThan((3 * N) / 4);
    await s.close();

    const sh = await start({ order: 'shuffled' });
    const x = (await page(sh, `?perPage=${N}`)).data;
    const y = (await page(sh, `?perPage=${N}`)).data;
    expect(new Set(ids(x))).toEqual(new Set(ids(y)));
    expect(ids(x)).not.toEqual(ids(y));
    // Paging through a shuffled listing shows some calls twice and misses others.
    const paged = await listAll(sh, 100);
    expect(new Set(ids(paged)).size).toBeLessThan(N);
  });

  it('perPageCap caps every page; per_page says the real size, the asked size, or nothing', async () => {
    for (const [echo, perPage] of [['honest', 30], ['requested', 100], ['omit', undefined]] as const) {
      const s = await start({ perPageCap: 30, perPageEcho: echo });
      const p = await page(s, '?page=2&perPage=100');
      expect(p.data).toHaveLength(30);
      expect(p.meta.pagination.per_page).toBe(perPage);
      expect('per_page' in p.meta.pagination).toBe(perPage !== undefined);
      expect(p.meta.pagination.total_pages).toBe(Math.ceil(N / 30));
      const all = await listAll(s, 100);
      expect(new Set(ids(all)).size).toBe(N);
      await s.close();
      sim = undefined;
    }
  });

  it('total and total_pages say what they are set to say; current_page can be left out', async () => {
    const meta = async (q: ListingQuirks, query = '?page=1&perPage=100'): Promise<Pagination> => {
      const s = await start(q);
      const m = (await page(s, query)).meta.pagination;
      await s.close();
      sim = undefined;
      return m;
    };
    expect(await meta({ total: 'omit', totalPages: 'omit', currentPage: 'omit' })).toEqual({ count: 100, per_page: 100 });
    expect(await meta({ total: 'low', totalPages: 'high' })).toEqual({ total: N / 3, count: 100, per_page: 100, current_page: 1, total_pages: 18 });
    expect(await meta({ total: 'high', totalPages: 'low' })).toEqual({ total: N * 3, count: 100, per_page: 100, current_page: 1, total_pages: 2 });
    expect((await meta({ perPageCap: 40, totalPages: 'requested-size' })).total_pages).toBe(Math.ceil(N / 100));

    const j = await start({ total: 'jitter' });
    const totals = new Set<number>();
    for (let k = 0; k < 20; k++) totals.add((await page(j, '?page=2')).meta.pagination.total ?? -1);
    for (const t of totals) expect(Math.abs(t - N)).toBeLessThanOrEqual(3);
    expect(totals.size).toBeGreaterThan(2);
    await j.close();

    const f = await start({ total: 'falling' });
    const seen: number[] = [];
    for (const p of [1, 2, 3, 4]) seen.push((await page(f, `?page=${p}`)).meta.pagination.total ?? -1);
    expect(seen).toEqual([N, N - 2, N - 4, N - 6]);
    // A new listing (first page) starts from the honest total again.
    expect((await page(f, '?page=1')).meta.pagination.total).toBe(N);
  });

  it("pastEnd 'repeat-last' answers past the end with the last real page", async () => {
    const s = await start({ pastEnd: 'repeat-last' });
    const last = await page(s, '?page=6&perPage=100');
    const past = await page(s, '?page=9&perPage=100');
    expect(last.data).toHaveLength(100);
    expect(ids(past.data)).toEqual(ids(last.data));
    expect(past.meta.pagination.current_page).toBe(9);
    expect(past.meta.pagination.total_pages).toBe(6);
  });

  it('shortPages end early and push the rest on, so paging to the end still sees every call', async () => {
    const s = await start({ shortPages: [2, 3] });
    const sizes: number[] = [];
    const all: Entry[] = [];
    for (let p = 1; p < 20; p++) {
      const { data, meta } = await page(s, `?page=${p}&perPage=100`);
      if (data.length === 0) break;
      sizes.push(data.length);
      all.push(...data);
      expect(meta.pagination.total_pages).toBe(7);
    }
    expect(sizes).toEqual([100, 50, 50, 100, 100, 100, 100]);
    expect(ids(all)).toEqual(ids(await listAllPlain(N)));
  });

  it('startedAtZeroForUnstarted: unstarted calls carry startedAt 0 on the wire and null in the truth', async () => {
    const s = await start({ startedAtZeroForUnstarted: true });
    const truth = s.truth(APP);
    const all = await listAll(s, 200);
    const unstarted = all.filter((e) => e.status !== 'ended' && e.status !== 'ongoing');
    expect(unstarted.length).toBeGreaterThan(N / 10);
    for (const e of unstarted) {
      expect(e.startedAt).toBe(0);
      expect(truth.calls.has(e.sessionId)).toBe(true);
      expect(truth.calls.get(e.sessionId)?.startedAt).toBeNull();
    }
    for (const e of all.filter((x) => x.status === 'ended')) expect(e.startedAt).toBeGreaterThan(0);
    const first = unstarted[0]!;
    expect((await getCall(s, first.sessionId)).call?.startedAt).toBe(0);
    // The order is still by the call's real time: the listing is where it was.
    expect(ids(all)).toEqual(ids(await listAllPlain(N)));
  });

  it('futureCalls carry times days after now, sort at the top, and are in the truth so', async () => {
    const s = await start({ futureCalls: 3 });
    const truth = s.truth(APP);
    const future = [...truth.calls.values()].filter((c) => (c.startedAt ?? 0) > DEFAULT_NOW);
    expect(future).toHaveLength(3);
    for (const c of future) {
      expect(c.startedAt).toBeGreaterThan(DEFAULT_NOW + 86_400);
      if (c.initiatedAt !== null) expect(c.initiatedAt).toBeGreaterThan(DEFAULT_NOW);
    }
    const top = (await page(s, '?perPage=3')).data;
    expect(new Set(ids(top))).toEqual(new Set(future.map((c) => c.sessionId)));
    expect((await getCall(s, future[0]!.sessionId)).call?.startedAt).toBe(future[0]!.startedAt);
    const all = await listAll(s, 100);
    expect(new Set(ids(all))).toEqual(new Set(truth.calls.keys()));
    const t = starts(all);
    for (let k = 1; k < t.length; k++) expect(t[k]).toBeLessThanOrEqual(t[k - 1] ?? 0);
    // /stats follows the truth's times.
    const stats = (await (await fetch(`${s.baseUrls(APP).chatBaseUrl}/stats?fromDate=${DEFAULT_NOW}&toDate=${DEFAULT_NOW + 30 * 86_400}`, { headers: { apikey: KEY } })).json()) as {
      data: { metrics: { audio_minutes: number; video_minutes: number } };
    };
    const minutes = future.reduce((sum, c) => sum + c.participants.reduce((a, p) => a + p.audioMinutes + p.videoMinutes, 0), 0);
    expect(stats.data.metrics.audio_minutes + stats.data.metrics.video_minutes).toBeCloseTo(minutes, 4);
  });

  it('equalStartedAt: groups share one startedAt and their order changes between requests', async () => {
    const s = await start({ equalStartedAt: true });
    const truth = s.truth(APP);
    const byStart = new Map<number, number>();
    for (const c of truth.calls.values()) byStart.set(c.startedAt ?? 0, (byStart.get(c.startedAt ?? 0) ?? 0) + 1);
    const groups = [...byStart.values()].filter((n) => n > 1);
    expect(groups.length).toBeGreaterThan(N / 30);
    const a = (await page(s, `?perPage=${N}`)).data;
    const b = (await page(s, `?perPage=${N}`)).data;
    expect(new Set(ids(a))).toEqual(new Set(truth.calls.keys()));
    expect(ids(a)).not.toEqual(ids(b));
    // Only calls of one startedAt trade places: the time order holds in both.
    expect(starts(a)).toEqual(starts(b));
    const t = starts(a);
    for (let k = 1; k < t.length; k++) expect(t[k]).toBeLessThanOrEqual(t[k - 1] ?? 0);
  });

  it('endLiveWhilePaging: live calls come first, end after the page, and drop to their startedAt place', async () => {
    const s = await start({ endLiveWhilePaging: { afterPage: 1, startedDaysAgo: 90 } });
    const before = s.truth(APP);
    const live = [...before.calls.values()].filter((c) => c.status === 'ongoing' || c.status === 'initiated');
    const longLive = live.filter((c) => (c.startedAt ?? 0) < DEFAULT_NOW - 20 * 86_400);
    expect(longLive).toHaveLength(2);
    const p1 = (await page(s, '?page=1&perPage=100')).data;
    expect(new Set(ids(p1.slice(0, live.length)))).toEqual(new Set(live.map((c) => c.sessionId)));
    const after = s.truth(APP);
    for (const c of live) expect(['ongoing', 'initiated']).not.toContain(after.calls.get(c.sessionId)?.status);
    for (const c of longLive) {
      const ended = after.calls.get(c.sessionId)!;
      expect(ended.startedAt).toBe(c.startedAt);
      expect(ended.endedAt).toBeGreaterThan(DEFAULT_NOW);
      expect(ended.relation).toBe('participant_sum');
    }
    // The calls between moved up by one place each: a client paging on misses the ones that
    // crossed onto page 1, and sees the ended long calls again further down.
    const rest = await listAll(s, 100);
    const seen = new Set([...ids(p1), ...ids(rest.slice(100))]);
    expect(N - seen.size).toBe(longLive.length);
    expect(new Set(ids(rest))).toEqual(new Set(after.calls.keys()));
    const t = starts(rest);
    for (let k = 1; k < t.length; k++) expect(t[k]).toBeLessThanOrEqual(t[k - 1] ?? 0);
  });

  it('combines pageBase 0, a cap, per_page echoing the ask and no total', async () => {
    const s = await start({ pageBase: 0, perPageCap: 25, perPageEcho: 'requested', total: 'omit' });
    const p = await page(s, '?page=0&perPage=100');
    expect(p.data).toHaveLength(25);
    expect(p.meta.pagination).toEqual({ count: 25, per_page: 100, current_page: 0, total_pages: N / 25 });
    const all = await listAll(s, 100, 0);
    expect(ids(all)).toEqual(ids(await listAllPlain(N)));
  });

  it('refuses quirks that mean nothing, naming the field', async () => {
    const s = await start(undefined);
    expect(() => s.setFaults({ quirks: { order: 'random' } as unknown as ListingQuirks })).toThrow(/quirks\.order must be one of/);
    expect(() => s.setFaults({ quirks: { perPagecap: 3 } as unknown as ListingQuirks })).toThrow(/quirks\.perPagecap is not a listing quirk/);
    expect(() => s.setFaults({ quirks: { shortPages: [0] } })).toThrow(/shortPages/);
    expect(() => s.setFaults({ quirks: { endLiveWhilePaging: { afterPage: 0 } } })).toThrow(/afterPage/);
    expect(() => s.advance(APP, { backdatedCalls: { count: 1, hoursAgo: -1 } })).toThrow(/hoursAgo/);
  });
});

describe('advance(): late calls', () => {
  it('backdatedCalls appear only now, below calls already listed, and in the truth from now on', async () => {
    const s = await start(undefined);
    const firstPage = (await page(s, '?perPage=100')).data;
    const r = s.advance(APP, { backdatedCalls: { count: 3, hoursAgo: 30 } });
    expect(r.backdated).toHaveLength(3);
    expect(r.added).toEqual([]);
    const truth = s.truth(APP);
    for (const [k, id] of r.backdated.entries()) {
      const c = truth.calls.get(id)!;
      expect(c.startedAt).toBe(DEFAULT_NOW - 30 * 3600 - k * 60);
      expect(c.endedAt ?? 0).toBeLessThan(DEFAULT_NOW);
      expect((await getCall(s, id)).call?.startedAt).toBe(c.startedAt);
    }
    const oldestListedBefore = Math.min(...starts(firstPage));
    expect(oldestListedBefore).toBeLessThan(DEFAULT_NOW - 30 * 3600);
    const all = await listAll(s, 100);
    expect(all).toHaveLength(N + 3);
    // Sorted into place: not at the top, where a newest-first client would look for new calls.
    const top = ids(all.slice(0, 3));
    for (const id of r.backdated) expect(top).not.toContain(id);
    const t = starts(all);
    for (let k = 1; k < t.length; k++) expect(t[k]).toBeLessThanOrEqual(t[k - 1] ?? 0);
  });

  it('revealLongCall: a days-long call appears ended, with its old startedAt, only after advance', async () => {
    const s = await start(undefined);
    const before = s.truth(APP);
    const r = s.advance(APP, { revealLongCall: { startedDaysAgo: 10 } });
    expect(r.revealed).toHaveLength(1);
    const id = r.revealed[0]!;
    expect(before.calls.has(id)).toBe(false);
    const c = s.truth(APP).calls.get(id)!;
    expect(c.status).toBe('ended');
    expect(c.startedAt).toBe(DEFAULT_NOW - 10 * 86_400);
    expect(c.endedAt).toBe(DEFAULT_NOW - 60);
    expect(c.totalDurationMinutes).toBeGreaterThan(9 * 24 * 60);
    expect(c.relation).toBe('participant_sum');
    const all = await listAll(s, 100);
    const at = ids(all).indexOf(id);
    expect(at).toBeGreaterThan(10);
    expect((await getCall(s, id)).call?.status).toBe('ended');
  });
});

/** The plain listing of a fresh simulator with the same dataset (the reference order). */
async function listAllPlain(calls: number): Promise<Entry[]> {
  const ref = await startSimulator({ apps: [{ appId: APP, region: 'us', apiKey: KEY, calls, seed: 21 }] });
  try {
    const out: Entry[] = [];
    for (let p = 1; ; p++) {
      const res = await fetch(`${ref.baseUrls(APP).callsBaseUrl}/calls?page=${p}&perPage=1000`, { headers: { apikey: KEY } });
      const { data } = (await res.json()) as Page;
      if (data.length === 0) return out;
      out.push(...data);
    }
  } finally {
    await ref.close();
  }
}
