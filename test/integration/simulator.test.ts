import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyCall, startSimulator, type AppTruth, type Simulator, type TruthCall } from '../../src/simulator/index.js';

const KEY = 'test-key';
const APP = 'app1';

interface ListBody {
  data: Record<string, unknown>[];
  meta: { pagination: { total: number; count: number; per_page?: number; current_page: number; total_pages: number } };
}

async function getJson(url: string, apikey: string | null = KEY): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await fetch(url, { headers: apikey === null ? {} : { apikey } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // HTML error pages stay text.
  }
  return { status: res.status, headers: res.headers, body };
}

/** The error code from either documented error shape. */
function errorCode(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const o = body as { code?: string; error?: { code?: string } };
  return o.error?.code ?? o.code;
}

async function listAll(sim: Simulator, appId: string, perPage: number): Promise<Record<string, unknown>[]> {
  const { callsBaseUrl } = sim.baseUrls(appId);
  const out: Record<string, unknown>[] = [];
  for (let page = 1; page < 10_000; page++) {
    const { status, body } = await getJson(`${callsBaseUrl}/calls?page=${page}&perPage=${perPage}`);
    expect(status).toBe(200);
    const list = body as ListBody;
    if (list.data.length === 0) break;
    out.push(...list.data);
  }
  return out;
}

function truthSnapshot(t: AppTruth): string {
  return JSON.stringify({
    calls: [...t.calls.values()],
    groups: [...t.groups.entries()],
    notFound: [...t.notFound],
    malformed: [...t.malformed],
    deleted: [...t.deletedGroups],
  });
}

describe('simulator', () => {
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({
      apps: [
        { appId: APP, region: 'us', apiKey: KEY, calls: 1500, seed: 11 },
        { appId: 'readonly', region: 'eu', apiKey: KEY, calls: 10, keyScope: 'readOnly' },
        { appId: 'dense', region: 'in', apiKey: KEY, calls: 6000, seed: 5, rateLimitHeaderStyle: 'X-Rate-Limit' },
        { appId: 'whole', region: 'us', apiKey: KEY, calls: 1500, seed: 11, listEntries: 'complete' },
      ],
    });
  });

  afterAll(async () => {
    await sim.close();
  });

  it('pages through every truth call exactly once, newest first, without faults', async () => {
    const truth = sim.truth(APP);
    const listed = await listAll(sim, APP, 400);
    const ids = listed.map((c) => c.sessionId as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(truth.calls.keys()));
    const started = listed.map((c) => c.startedAt as number);
    for (let k = 1; k < started.length; k++) expect(started[k - 1]).toBeGreaterThanOrEqual(started[k] ?? 0);

    const { callsBaseUrl } = sim.baseUrls(APP);
    const first = (await getJson(`${callsBaseUrl}/calls?perPage=400&page=1`)).body as ListBody;
    expect(first.meta.pagination).toEqual({ total: 1500, count: 400, per_page: 400, current_page: 1, total_pages: 4 });
    const defaults = (await getJson(`${callsBaseUrl}/calls`)).body as ListBody;
    expect(defaults.data).toHaveLength(100);
    const clamped = (await getJson(`${callsBaseUrl}/calls?perPage=5000`)).body as ListBody;
    expect(clamped.meta.pagination.per_page).toBe(1000);
    const past = (await getJson(`${callsBaseUrl}/calls?page=99&perPage=400`)).body as ListBody;
    expect(past.data).toEqual([]);
    // Most list entries carry participants; a few force a Get Call.
    const without = listed.filter((c) => !('participants' in c)).length;
    expect(without).toBeGreaterThan(0);
    expect(without).toBeLessThan(listed.length * 0.15);
  });

  it("serves every final call's list entry whole with listEntries 'complete'", async () => {
    const varied = await listAll(sim, APP, 400);
    const whole = await listAll(sim, 'whole', 400);
    expect(whole).toHaveLength(1500);
    const final = whole.filter((c) => c.status !== 'initiated' && c.status !== 'ongoing');
    expect(final.length).toBeGreaterThan(whole.length - 10);
    for (const c of final) expect(c).toHaveProperty('participants');
    expect(varied.filter((c) => !('participants' in c)).length).toBeGreaterThan(0);
  });

  it('states relation and issues exactly as the checks find them', () => {
    const truth = sim.truth('dense');
    const counts: Record<string, number> = {};
    let ended = 0;
    for (const call of truth.calls.values()) {
      const { relation, issues } = classifyCall(call);
      expect({ relation, issues }).toEqual({ relation: call.relation, issues: call.issues });
      if (call.relation !== 'mismatch') expect(call.issues).toEqual([]);
      if (call.status === 'ended') {
        ended++;
        counts[call.relation] = (counts[call.relation] ?? 0) + 1;
      }
      if (call.status !== 'ended' && call.relation !== 'incomplete') expect(call.totalDurationMinutes).toBe(0);
    }
    expect((counts.participant_sum ?? 0) / ended).toBeGreaterThan(0.4);
    expect((counts.wall_clock ?? 0) / ended).toBeGreaterThan(0.28);
    expect((counts.mismatch ?? 0) / ended).toBeGreaterThan(0.1);
    const statuses = new Set([...truth.calls.values()].map((c) => c.status));
    for (const s of ['ended', 'unanswered', 'rejected', 'canceled', 'busy', 'cancelled', 'missed']) expect(statuses).toContain(s);
    expect(truth.groups.get('group-1')).toHaveLength(2500);
    expect(truth.deletedGroups.size).toBeGreaterThan(0);
    for (const g of truth.deletedGroups) expect(truth.groups.get(g)).toEqual([]);
  });

  it('answers Get Call in both envelopes and decodes percent-encoded session ids', async () => {
    const { callsBaseUrl } = sim.baseUrls(APP);
    const calls = [...sim.truth(APP).calls.values()].slice(0, 400);
    const bodies = await Promise.all(
      calls.map((c) => getJson(`${callsBaseUrl}/calls/${encodeURIComponent(c.sessionId)}`)),
    );
    let arrays = 0;
    let objects = 0;
    bodies.forEach(({ status, body }, k) => {
      expect(status).toBe(200);
      const data = (body as { data: unknown }).data;
      const call = (Array.isArray(data) ? data[0] : data) as { sessionId: string; participants: unknown[] };
      if (Array.isArray(data)) arrays++;
      else objects++;
      expect(call.sessionId).toBe(calls[k]?.sessionId);
      expect(Array.isArray(call.participants)).toBe(true);
    });
    expect(arrays).toBeGreaterThan(0);
    expect(objects).toBeGreaterThan(arrays);

    const awkward = [...sim.truth(APP).calls.keys()].filter((id) => id.includes('/'));
    expect(awkward.length).toBeGreaterThan(0);
    for (const id of awkward) {
      const { status, body } = await getJson(`${callsBaseUrl}/calls/${encodeURIComponent(id)}`);
      expect(status).toBe(200);
      const data = (body as { data: unknown }).data;
      expect(((Array.isArray(data) ? data[0] : data) as { sessionId: string }).sessionId).toBe(id);
    }
    const missing = await getJson(`${callsBaseUrl}/calls/v1.us.${APP}.000000000000000000000000`);
    expect(missing.status).toBe(404);
    expect(errorCode(missing.body)).toBe('ERR_CALL_SESSION_NOT_FOUND');
  });

  it('rejects missing, wrong and under-scoped keys and unknown apps', async () => {
    const { callsBaseUrl } = sim.baseUrls(APP);
    const shapes = new Set<string>();
    for (let k = 0; k < 2; k++) {
      const empty = await getJson(`${callsBaseUrl}/calls`, null);
      expect(empty.status).toBe(401);
      expect(errorCode(empty.body)).toBe('AUTH_ERR_EMPTY_APIKEY');
      shapes.add('error' in (empty.body as object) ? 'wrapped' : 'flat');
    }
    expect(shapes).toEqual(new Set(['wrapped', 'flat']));
    const wrong = await getJson(`${callsBaseUrl}/calls`, 'nope');
    expect(wrong.status).toBe(401);
    expect(errorCode(wrong.body)).toBe('AUTH_ERR_APIKEY_NOT_FOUND');
    const unknown = await getJson(`${sim.url}/ghost.call-us/v3/calls`);
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown.body)).toBe('AUTH_ERR_INVALID_APPID');
    const readOnly = await getJson(`${sim.baseUrls('readonly').callsBaseUrl}/calls`);
    expect(readOnly.status).toBe(403);
    expect(errorCode(readOnly.body)).toBe('AUTH_ERR_NO_ACCESS');
    const elsewhere = await getJson(`${callsBaseUrl}/users`);
    expect(elsewhere.status).toBe(404);
    expect(sim.stats(APP).auth).toBeGreaterThanOrEqual(3);
  });

  it('pages group members past 1000, hides deleted groups and sums usage metrics', async () => {
    const { chatBaseUrl } = sim.baseUrls('dense');
    const uids: string[] = [];
    const cursorPlaces = new Set<string>();
    for (let page = 1; ; page++) {
      const { status, body } = await getJson(`${chatBaseUrl}/groups/group-1/members?perPage=1000&page=${page}`);
      expect(status).toBe(200);
      const b = body as { data: { uid: string }[]; cursor?: unknown; meta: { cursor?: unknown } };
      cursorPlaces.add(b.cursor !== undefined ? 'top' : b.meta.cursor !== undefined ? 'meta' : 'none');
      if (b.data.length === 0) break;
      uids.push(...b.data.map((m) => m.uid));
    }
    expect(uids).toEqual(sim.truth('dense').groups.get('group-1'));
    expect(cursorPlaces).toEqual(new Set(['top', 'meta']));
    const admins = (await getJson(`${chatBaseUrl}/groups/group-1/members?scopes=admin,moderator&status=available`)).body as { data: { scope: string; status: string }[] };
    for (const m of admins.data) {
      expect(['admin', 'moderator']).toContain(m.scope);
      expect(m.status).toBe('available');
    }
    const deleted = [...sim.truth('dense').deletedGroups][0] ?? 'group-999';
    const gone = await getJson(`${chatBaseUrl}/groups/${deleted}/members`);
    expect(gone.status).toBe(404);
    expect(errorCode(gone.body)).toBe('ERR_GUID_NOT_FOUND');

    const from = 1_764_547_200 - 30 * 86_400;
    const to = 1_764_547_200 - 86_400;
    let audio = 0;
    let video = 0;
    for (const c of sim.truth('dense').calls.values()) {
      if (c.startedAt === null || c.startedAt < from || c.startedAt >= to) continue;
      for (const p of c.participants) {
        audio += p.audioMinutes;
        video += p.videoMinutes;
      }
    }
    for (const [f, t] of [[from, to], [from * 1000, to * 1000]]) {
      const stats = (await getJson(`${chatBaseUrl}/stats?fromDate=${f}&toDate=${t}`)).body as {
        data: { metrics: Record<string, number>; time_range: { fromDate: number; toDate: number } };
      };
      expect(stats.data.metrics.audio_minutes).toBeCloseTo(audio, 4);
      expect(stats.data.metrics.video_minutes).toBeCloseTo(video, 4);
      expect(stats.data.time_range).toEqual({ fromDate: from * 1000, toDate: to * 1000 });
    }
  });

  it('answers 429 past a sliding per-minute window, with the app\'s header style', async () => {
    sim.setFaults({ rateLimitPerMinute: 5 });
    const { callsBaseUrl } = sim.baseUrls('dense');
    for (let k = 0; k < 5; k++) {
      const ok = await getJson(`${callsBaseUrl}/calls?perPage=1`);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-rate-limit')).toBe('5');
      expect(ok.headers.get('x-rate-limit-remaining')).toBe(String(4 - k));
    }
    const limited = await getJson(`${callsBaseUrl}/calls?perPage=1`);
    expect(limited.status).toBe(429);
    expect(errorCode(limited.body)).toBe('ERR_TOO_MANY_REQUESTS');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
    expect(Number(limited.headers.get('x-rate-limit-reset'))).toBeGreaterThan(Date.now() / 1000);

    sim.setFaults({ rateLimitPerMinute: 1, retryAfter: 'http-date' });
    const other = sim.baseUrls(APP).callsBaseUrl;
    expect((await getJson(`${other}/calls?perPage=1`)).headers.get('x-ratelimit-remaining')).toBe('0');
    const dated = await getJson(`${other}/calls?perPage=1`);
    expect(dated.status).toBe(429);
    expect(Date.parse(dated.headers.get('retry-after') ?? '')).toBeGreaterThan(Date.now());
    sim.setFaults({});
    expect((await getJson(`${other}/calls?perPage=1`)).headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('rateLimitWindowSeconds shortens the window, its headers with it; a window that is not a whole number of seconds is refused', async () => {
    sim.setFaults({ rateLimitPerMinute: 1, rateLimitWindowSeconds: 7 });
    const { callsBaseUrl } = sim.baseUrls('dense');
    expect((await getJson(`${callsBaseUrl}/calls?perPage=1`)).status).toBe(200);
    const limited = await getJson(`${callsBaseUrl}/calls?perPage=1`);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(7);
    expect(Number(limited.headers.get('x-rate-limit-reset'))).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 7);
    for (const bad of [0, 1.5, -60]) expect(() => sim.setFaults({ rateLimitPerMinute: 1, rateLimitWindowSeconds: bad }), String(bad)).toThrow(/FaultProfile\.rateLimitWindowSeconds must be an integer >= 1/);
    sim.setFaults({});
  });

  it('injects not-found, malformed, vanishing and transport faults', async () => {
    const local = await startSimulator({
      apps: [{ appId: 'f', region: 'eu', apiKey: KEY, calls: 300, seed: 3 }],
      faults: { notFoundCalls: 4, malformedCalls: 3, removeWhilePaging: { afterPage: 1, count: 5 } },
    });
    try {
      const { callsBaseUrl } = local.baseUrls('f');
      const before = local.truth('f');
      expect(before.notFound.size).toBe(4);
      expect(before.malformed.size).toBe(3);
      for (const id of before.malformed) expect(before.calls.has(id)).toBe(false);
      for (const id of before.notFound) {
        expect(before.calls.get(id)?.participants).toEqual([]);
        const r = await getJson(`${callsBaseUrl}/calls/${encodeURIComponent(id)}`);
        expect(r.status).toBe(404);
        expect(errorCode(r.body)).toBe('ERR_CALL_SESSION_NOT_FOUND');
      }
      const listed = await listAll(local, 'f', 100);
      const malformedEntry = listed.find((c) => before.malformed.has(c.sessionId as string));
      expect(malformedEntry).toBeDefined();
      expect(typeof malformedEntry?.sessionId).toBe('string');
      for (const entry of listed) {
        if (before.notFound.has(entry.sessionId as string)) expect(entry.participants).toBeUndefined();
      }
      const after = local.truth('f');
      expect(after.removed.size).toBe(5);
      expect(after.calls.size + after.malformed.size).toBe(300 - 5);
      for (const id of after.removed) {
        expect(after.calls.has(id)).toBe(false);
        expect((await getJson(`${callsBaseUrl}/calls/${encodeURIComponent(id)}`)).status).toBe(404);
      }
      // Removal shifted later pages up: a naive offset pager misses calls.
      const seen = new Set(listed.map((c) => c.sessionId as string));
      expect([...after.calls.keys()].some((id) => !seen.has(id))).toBe(true);

      local.setFaults({ http5xxRate: 1 });
      const html = await getJson(`${callsBaseUrl}/calls`);
      expect([500, 502, 503]).toContain(html.status);
      expect(typeof html.body).toBe('string');
      local.setFaults({ resetRate: 1 });
      await expect(fetch(`${callsBaseUrl}/calls`, { headers: { apikey: KEY } })).rejects.toThrow();
      local.setFaults({ truncateRate: 1 });
      await expect(fetch(`${callsBaseUrl}/calls`, { headers: { apikey: KEY } }).then((r) => r.text())).rejects.toThrow();
      local.setFaults({ stallRate: 1, stallMs: 5000 });
      await expect(fetch(`${callsBaseUrl}/calls`, { headers: { apikey: KEY }, signal: AbortSignal.timeout(100) })).rejects.toThrow();
      const s = local.stats('f');
      expect(s.http5xx).toBe(1);
      expect(s.reset).toBe(1);
      expect(s.truncate).toBe(1);
      expect(s.stall).toBe(1);
      expect(s.notFound).toBeGreaterThanOrEqual(9);
    } finally {
      const t0 = Date.now();
      await local.close();
      expect(Date.now() - t0).toBeLessThan(1000);
    }
  });

  it('is deterministic: same seed, same truth and bytes; another seed differs', async () => {
    const apps = [{ appId: 'd', region: 'eu' as const, apiKey: KEY, calls: 400, seed: 99 }];
    const a = await startSimulator({ apps });
    const b = await startSimulator({ apps });
    const c = await startSimulator({ apps: [{ ...apps[0]!, seed: 100 }] });
    try {
      expect(truthSnapshot(a.truth('d'))).toBe(truthSnapshot(b.truth('d')));
      expect(truthSnapshot(a.truth('d'))).not.toBe(truthSnapshot(c.truth('d')));
      const page = async (s: Simulator): Promise<string> =>
        (await fetch(`${s.baseUrls('d').callsBaseUrl}/calls?page=2&perPage=50`, { headers: { apikey: KEY } })).text();
      expect(await page(a)).toBe(await page(b));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('makes advance() changes visible in List, Get and the truth', async () => {
    const before = sim.truth('dense');
    const running = [...before.calls.values()].filter((c) => c.relation === 'incomplete');
    expect(running.length).toBeGreaterThan(0);

    const changes = sim.advance('dense', { endOngoing: true, addRecordings: 3, newCalls: 4 });
    expect(new Set(changes.ended)).toEqual(new Set(running.map((c) => c.sessionId)));
    expect(changes.recorded.length).toBeGreaterThan(0);
    expect(changes.added).toHaveLength(4);

    const after = sim.truth('dense');
    expect(after.calls.size).toBe(before.calls.size + 4);
    for (const id of changes.ended) {
      const call = after.calls.get(id) as TruthCall;
      expect(['initiated', 'ongoing']).not.toContain(call.status);
      expect(call.endedAt).toBeGreaterThan(1_764_547_200);
    }
    for (const id of changes.recorded) {
      expect(before.calls.get(id)?.hasRecording).toBe(false);
      expect(after.calls.get(id)?.hasRecording).toBe(true);
      expect(after.calls.get(id)?.startedAt).toBeGreaterThanOrEqual(1_764_547_200 - 86_400);
    }
    const { callsBaseUrl } = sim.baseUrls('dense');
    const top = (await getJson(`${callsBaseUrl}/calls?perPage=4`)).body as ListBody;
    expect(top.data.map((c) => c.sessionId)).toEqual([...changes.added].reverse());
    const ended = changes.ended[0] ?? '';
    const got = (await getJson(`${callsBaseUrl}/calls/${encodeURIComponent(ended)}`)).body as { data: unknown };
    const call = (Array.isArray(got.data) ? got.data[0] : got.data) as { status: string; endedAt?: number };
    expect(call.status).toBe(after.calls.get(ended)?.status);
    expect(call.endedAt).toBe(after.calls.get(ended)?.endedAt);
  });
});
