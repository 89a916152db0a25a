import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { relay, startProxy, viaProxy, type Reply } from './support/servers.js';

/**
 * List Group Members servers hostile probes (session 28, helpers 58 and 59) found `ok` with members missing
 * (or, for Django REST framework's "Invalid page.", partial on every run),
 * each answering the members endpoint its own way in front of the fake (which answers the rest):
 * the database against the members the server held throughout, from the user's side.
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 2, requestTimeoutMs: 2_000 } as const;
const tmp = tempDir('callsync-members-hostile-');
afterAll(() => tmp.cleanup());

type Members = (q: { guid: string; page: number; perPage: number; all: string[]; index: number }) => Reply;
const page = (data: unknown[], pagination: Record<string, unknown>): Reply => ({ status: 200, body: JSON.stringify({ data, meta: { pagination } }) });
const member = (uid: string) => ({ uid, name: uid, scope: 'participant', joinedAt: 1700000000 });
const notFound: Reply = { status: 404, body: JSON.stringify({ error: { code: 'ERR_GUID_NOT_FOUND', message: 'The group does not exist.' } }) };

/** Groups sized by their place in the sync's (sorted) order; `answer` serves their members. */
async function sync(name: string, fake: FakeOptions, sizes: (index: number) => number, answer: Members) {
  const service = await FakeCallsService.start({ seed: 90, calls: 150, ongoing: 0, ...fake });
  const guids = [...service.members.keys()].sort();
  service.members.clear();
  guids.forEach((g, i) => service.members.set(g, Array.from({ length: sizes(i) }, (_, j) => `${g}-m-${j}`)));
  const proxy = await startProxy(service.url, async (req, pass) => {
    const [path, query = ''] = req.url.split('?') as [string, string?];
    const m = /\/groups\/([^/]+)\/members$/.exec(path);
    if (!m) return relay(await pass());
    const guid = decodeURIComponent(m[1]!);
    const all = service.members.get(guid);
    if (!all) return notFound;
    const params = new URLSearchParams(query);
    return answer({ guid, page: Number(params.get('page')), perPage: Number(params.get('perPage')), all, index: guids.indexOf(guid) });
  });
  try {
    const database = join(tmp.dir, `${name}.db`);
    const result = (await syncWith(settingsAt(viaProxy(proxy.url, 'app1'), database, SETTINGS))).results[0]!;
    const rows = await withStore(database, ({ db }) => db.selectFrom('group_members').select(['guid', 'uid']).execute());
    const stored = new Set(rows.map((r) => `${r.guid}/${r.uid}`));
    const held = [...service.members].flatMap(([guid, uids]) => uids.map((u) => `${guid}/${u}`));
    return { result, missing: held.filter((k) => !stored.has(k)).length, extra: stored.size - held.filter((k) => stored.has(k)).length };
  } finally {
    await proxy.close();
    await service.close();
  }
}

describe('group members from hostile servers: exact, or partial, never ok with members missing', () => {
  it('pages capped per group, no total, total_pages from the perPage asked: a short first page is not believed on total_pages alone, exact, ok', async () => {
    // The first group served 1,000 a page and read 2 of its 2 pages; every later group is capped at
    // 10 of its 25 and says total_pages 1 (25 / 1000): believed, 10 of 25 stored each, ok.
    const r = await sync('capped-pages-only', { groups: 8 }, (i) => (i === 0 ? 1500 : 25), ({ page: p, perPage, all, index }) => {
      const size = Math.min(perPage, index === 0 ? 1000 : 10);
      const n = Math.max(1, p);
      const data = all.slice((n - 1) * size, n * size).map(member);
      return page(data, { count: data.length, per_page: perPage, current_page: n, total_pages: Math.max(1, Math.ceil(all.length / perPage)) });
    });
    expect(r.result.status, r.result.error).toBe('ok');
    expect({ missing: r.missing, extra: r.extra }).toEqual({ missing: 0, extra: 0 });
  });

  it("each page's own count as its total, offsets stepping by the perPage asked: the page size is checked, exact, ok", async () => {
    // Page 1 serves 20 with total 20 (all there is, it says); page 2 starts at 1000 and is empty.
    // Believed, 20 of 45 stored each, ok.
    const r = await sync('own-count-offsets', { groups: 3 }, () => 45, ({ page: p, perPage, all }) => {
      const n = Math.max(1, p);
      const data = all.slice((n - 1) * perPage, (n - 1) * perPage + 20).map(member);
      return page(data, { total: data.length, count: data.length, per_page: perPage, current_page: n, total_pages: 1 });
    });
    expect(r.result.status, r.result.error).toBe('ok');
    expect({ missing: r.missing, extra: r.extra }).toEqual({ missing: 0, extra: 0 });
  });

  it('one ERR_GUID_NOT_FOUND on the page-size check is asked again, not taken for a check passed: exact, ok', async () => {
    const checked = new Set<string>();
    const r = await sync('check-not-found', { groups: 3 }, () => 45, ({ guid, page: p, perPage, all }) => {
      if (perPage !== 1000 && !checked.has(guid)) {
        checked.add(guid);
        return notFound;
      }
      const n = Math.max(1, p);
      const data = all.slice((n - 1) * perPage, (n - 1) * perPage + Math.min(perPage, 20)).map(member);
      return page(data, { total: 0, count: data.length, per_page: perPage, current_page: n, total_pages: Math.max(1, Math.ceil(all.length / perPage)) });
    });
    expect(r.result.status, r.result.error).toBe('ok');
    expect({ missing: r.missing, extra: r.extra }).toEqual({ missing: 0, extra: 0 });
  });

  it('pages from 0 and one bare 404 on a page 0: one group is no proof that pages count from 1, exact, ok', async () => {
    // current_page only, no total. Taken as "page 0 refused", the run asked every later group
    // page 1 alone: 100 members of each lost, 500 in all, ok.
    let hiccup = false;
    const r = await sync('zero-hiccup', { groups: 8 }, (i) => (i === 0 ? 250 : 220 + i), ({ page: p, perPage, all }) => {
      if (p === 0 && !hiccup) {
        hiccup = true;
        return { status: 404, body: '<html><body><h1>404 Not Found</h1></body></html>' };
      }
      const size = Math.min(perPage, 100);
      const data = all.slice(p * size, p * size + size).map(member);
      return page(data, { count: data.length, per_page: size, current_page: p });
    });
    expect(r.result.status, r.result.error).toBe('ok');
    expect({ missing: r.missing, extra: r.extra }).toEqual({ missing: 0, extra: 0 });
  });
  it.each([
    ['a total and a page count of the answer itself', (n: number) => ({ total: n, count: n, current_page: 1, total_pages: 1 })],
    ['a page count of the answer itself', (n: number) => ({ count: n, current_page: 1, total_pages: 1 })],
  ] as const)('paging by cursor only (page ignored), full pages, %s: the repeated full page is no end, partial, nothing half-stored', async (_name, figures) => {
    // Every request answers the first 1,000 of 1,500 members. Page 2 repeats page 1 "past the
    // reported end" of figures that describe the answer alone: taken for the end, 1,000 of 1,500
    // stored per group, ok.
    const r = await sync('cursor-only-full', { groups: 3 }, () => 1500, ({ perPage, all }) => {
      const data = all.slice(0, Math.min(perPage, 1000)).map(member);
      return page(data, { ...figures(data.length), per_page: perPage });
    });
    expect(r.result.status).toBe('partial');
    expect(r.result.error).toMatch(/page 2 repeats the previous page/);
    expect(r.result.membersSynced).toBe(0);
  });

  it('paging by cursor only, capped at 100, page count from the perPage asked: the check at the served size holds its own page count, partial', async () => {
    // Page 1 at perPage 1000: 100 members, total_pages 1; page 2 repeats it. The check (page 2 at
    // perPage 100) answers page 1 again beside total_pages 3: 100 of 250 stored per group, ok.
    const r = await sync('cursor-only-capped', { groups: 3 }, () => 250, ({ perPage, all }) => {
      const data = all.slice(0, Math.min(perPage, 100)).map(member);
      return page(data, { count: data.length, per_page: perPage, current_page: 1, total_pages: Math.max(1, Math.ceil(all.length / perPage)) });
    });
    expect(r.result.status).toBe('partial');
    expect(r.result.membersSynced).toBe(0);
  });

  it.each([404, 400] as const)('honest pages whose page past the last answers %i "Invalid page." (Django REST framework): the end of a short page whose total agrees, exact, ok', async (status) => {
    // Partial on every run before: a short first page is not believed alone, and the page after it
    // failed the group.
    const r = await sync(`invalid-page-${status}`, { groups: 6 }, (i) => 30 + i * 7, ({ page: p, perPage, all }) => {
      const last = Math.max(1, Math.ceil(all.length / perPage));
      if (p < 1 || p > last) return { status, body: JSON.stringify({ detail: 'Invalid page.' }) };
      const data = all.slice((p - 1) * perPage, p * perPage).map(member);
      return page(data, { total: all.length, count: data.length, per_page: perPage, current_page: p, total_pages: last });
    });
    expect(r.result.status, r.result.error).toBe('ok');
    expect({ missing: r.missing, extra: r.extra }).toEqual({ missing: 0, extra: 0 });
  });
});
