/**
 * The bound: a bare client doing the HTTP work of a full sync with `detailFetch: always` and
 * nothing else. It lists every page (newest first, as the sync does) and Gets every listed call,
 * `concurrency` Gets at once while listing goes on, parses each body with JSON.parse and stores
 * nothing. A keep-alive undici Agent sized as in src/cli/runtime.ts. No pacing, no validation.
 *
 * With `busyUsPerCall`, the main thread spins that long after each Get (standing in for a sync's own
 * work per call), so the client runs at a sync's pace; `busyMs` is the spun time, to subtract. A
 * client's CPU per request depends on its pace: on loopback each write wakes the server when it is
 * idle, which a client that keeps it busy never pays.
 *
 *   node --import tsx bench/bound-client.ts '<BoundArgs as JSON>'     → one JSON line (BoundResult)
 */
import pLimit from 'p-limit';
import { Agent } from 'undici';
import { bareJsonClient } from './lib.js';

export interface BoundArgs {
  callsBaseUrl: string;
  apiKey: string;
  pageSize: number;
  concurrency: number;
  busyUsPerCall?: number;
}

export interface BoundResult {
  calls: number;
  requests: number;
  ms: number;
  /** CPU time (user + system, all threads) of this process while it ran. */
  cpuMs: number;
  /** Of cpuMs, the time spun for busyUsPerCall (0 without it). */
  busyMs: number;
  maxRssBytes: number;
}

/** Listed pages whose Gets may be outstanding while the next page is listed (as the sync's pipeline). */
const PAGES_AHEAD = 4;

const args = JSON.parse(process.argv[2] ?? '{}') as BoundArgs;
const agent = new Agent({ connections: args.concurrency + 2, keepAliveTimeout: 10_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
const client = bareJsonClient(args.callsBaseUrl, args.apiKey, agent);
const { getJson } = client;

interface ListBody {
  data: { sessionId: string }[];
  meta?: { pagination?: { total_pages?: number; current_page?: number } };
}

const limit = pLimit(args.concurrency);
const busyMs = (args.busyUsPerCall ?? 0) / 1000;
let spunMs = 0;
/** One Get; then, with busyUsPerCall, a spin of that long on the main thread. */
async function getCall(id: string): Promise<unknown> {
  const body = await getJson(`/calls/${encodeURIComponent(id)}`);
  if (busyMs > 0) {
    const t = performance.now();
    while (performance.now() - t < busyMs);
    spunMs += performance.now() - t;
  }
  return body;
}
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let calls = 0;
const outstanding: Promise<unknown>[] = [];
for (let page = 1; ; page++) {
  const body = (await getJson(`/calls?page=${page}&perPage=${args.pageSize}`)) as ListBody;
  const ids = body.data.map((c) => c.sessionId);
  calls += ids.length;
  outstanding.push(Promise.all(ids.map((id) => limit(() => getCall(id)))));
  if (outstanding.length >= PAGES_AHEAD) await outstanding.shift();
  const p = body.meta?.pagination;
  if (ids.length < args.pageSize && (p?.total_pages === undefined || (p.current_page ?? page) >= p.total_pages)) break;
}
await Promise.all(outstanding);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await agent.close();
const result: BoundResult = { calls, requests: client.requests, ms, cpuMs: (cpu.user + cpu.system) / 1000, busyMs: spunMs, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
process.stdout.write(`${JSON.stringify(result)}\n`);
