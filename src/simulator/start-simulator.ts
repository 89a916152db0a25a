import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppDataset } from './dataset.js';
import { hash3, hashString } from './prng.js';
import { newListingState } from './list-calls.js';
import { type AppRuntime, rateLimitHeaderNames, SimulatorHandler } from './server.js';
import { addStats, emptyStats, zeroStats } from './stats.js';
import type { AdvanceOptions, AdvanceResult, SimAppSpec, Simulator, SimStats, SimulatorOptions } from './types.js';

/** 2025-12-01T00:00:00Z: a fixed "now" keeps datasets identical across days. */
export const DEFAULT_NOW = 1_764_547_200;
/** List Calls perPage cap, as documented for the sibling endpoints (api-facts.md). */
export const DEFAULT_MAX_PER_PAGE = 1000;
const REGIONS: ReadonlySet<string> = new Set(['us', 'eu', 'in']);
/** Longer than clients' pool idle timeouts, so the server never closes a socket under a client. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Throws on advance() options that cannot mean anything, naming the field. */
function validateAdvance(o: AdvanceOptions): void {
  const b = o.backdatedCalls;
  if (b !== undefined && !(Number.isInteger(b.count) && b.count >= 0 && typeof b.hoursAgo === 'number' && b.hoursAgo > 0)) {
    throw new Error('advance backdatedCalls needs an integer count >= 0 and hoursAgo > 0 (>= 2 keeps the calls ended before now)');
  }
  const r = o.revealLongCall;
  if (r !== undefined && !(typeof r.startedDaysAgo === 'number' && r.startedDaysAgo > 0)) {
    throw new Error('advance revealLongCall needs startedDaysAgo > 0');
  }
}

function validateApp(spec: SimAppSpec, seen: Set<string>): void {
  const where = `simulator app ${JSON.stringify(spec.appId)}`;
  if (typeof spec.appId !== 'string' || spec.appId === '' || /[/?#%\s]/.test(spec.appId) || spec.appId.includes('.call-') || spec.appId.includes('.api-')) {
    throw new Error(`${where}: appId must be a non-empty host label (no '/', '?', '#', '%', spaces, '.call-' or '.api-')`);
  }
  if (seen.has(spec.appId)) throw new Error(`${where}: appId is listed twice; give each app its own id`);
  seen.add(spec.appId);
  if (!REGIONS.has(spec.region)) throw new Error(`${where}: region must be us, eu or in`);
  if (typeof spec.apiKey !== 'string' || spec.apiKey === '') throw new Error(`${where}: apiKey must be a non-empty string`);
  if (!Number.isInteger(spec.calls) || spec.calls < 0 || spec.calls > 2 ** 31) {
    throw new Error(`${where}: calls must be an integer between 0 and 2^31`);
  }
  if (spec.unavailableRequests !== undefined && !(Number.isInteger(spec.unavailableRequests) && spec.unavailableRequests >= 0)) {
    throw new Error(`${where}: unavailableRequests must be an integer >= 0`);
  }
}

/**
 * The appId is mixed into the seed so that apps sharing a seed (`callsync simulate --seed 1`) still
 * get different calls: a client that mixes up apps must not end with matching numbers by chance.
 */
export function datasetSeed(spec: Pick<SimAppSpec, 'appId' | 'seed'>): number {
  const app = hashString(spec.appId);
  return spec.seed === undefined ? app : hash3(spec.seed, app, 0);
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * The two base URLs of an app served at `url` (http://HOST:PORT): the host-like first path segment
 * tells apps apart. Exported so a config can point at a simulator that is not running yet (`demo`).
 */
export function simulatorBaseUrls(url: string, appId: string, region: string): { callsBaseUrl: string; chatBaseUrl: string } {
  return {
    callsBaseUrl: `${url}/${appId}.call-${region}/v3`,
    chatBaseUrl: `${url}/${appId}.api-${region}/v3`,
  };
}

/**
 * Starts the simulator on `host:port` (port 0 picks a free one). Resolves once listening; rejects
 * when the options are invalid or the port cannot be bound.
 */
export async function startSimulator(opts: SimulatorOptions): Promise<Simulator> {
  const now = opts.now ?? DEFAULT_NOW;
  const maxPerPage = opts.maxPerPage ?? DEFAULT_MAX_PER_PAGE;
  if (!Number.isInteger(maxPerPage) || maxPerPage < 1) throw new Error('simulator maxPerPage must be a positive integer');
  const seen = new Set<string>();
  const apps = new Map<string, AppRuntime>();
  for (const spec of opts.apps) {
    validateApp(spec, seen);
    apps.set(spec.appId, {
      spec: { ...spec },
      dataset: new AppDataset(spec.appId, spec.region, datasetSeed(spec), spec.calls, now, spec.listEntries),
      stats: emptyStats(),
      window: null,
      listing: newListingState(),
      limitHeaders: rateLimitHeaderNames(spec.rateLimitHeaderStyle),
    });
  }
  const handler = new SimulatorHandler(apps, maxPerPage);
  handler.setFaults(opts.faults ?? {});

  const server = createServer({ keepAlive: true, noDelay: true }, handler.handle);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${hostForUrl(host)}:${port}`;

  const appOf = (appId: string): AppRuntime => {
    const app = apps.get(appId);
    if (!app) throw new Error(`simulator has no app ${JSON.stringify(appId)}; known: ${[...apps.keys()].join(', ')}`);
    return app;
  };

  let closing: Promise<void> | null = null;
  return {
    url,
    baseUrls(appId: string) {
      const { spec } = appOf(appId);
      return simulatorBaseUrls(url, spec.appId, spec.region);
    },
    setFaults(f) {
      handler.setFaults(f);
    },
    stats(appId?: string): SimStats {
      if (appId !== undefined) return { ...appOf(appId).stats };
      const all = emptyStats();
      for (const app of apps.values()) addStats(all, app.stats);
      addStats(all, handler.orphanStats);
      return all;
    },
    resetStats() {
      for (const app of apps.values()) zeroStats(app.stats);
      zeroStats(handler.orphanStats);
    },
    truth(appId: string) {
      return appOf(appId).dataset.truth();
    },
    truthCalls(appId: string) {
      return appOf(appId).dataset.truthCalls();
    },
    advance(appId: string, o: AdvanceOptions): AdvanceResult {
      validateAdvance(o);
      const ds = appOf(appId).dataset;
      const ended = o.endOngoing ? ds.endRunning() : [];
      const recorded = o.addRecordings ? ds.addLateRecordings(o.addRecordings) : [];
      const added = o.newCalls ? ds.addNewest(o.newCalls) : [];
      const backdated = o.backdatedCalls ? ds.addBackdated(o.backdatedCalls.count, o.backdatedCalls.hoursAgo) : [];
      const revealed = o.revealLongCall ? [ds.revealLongCall(o.revealLongCall.startedDaysAgo)] : [];
      const settled = o.settleLateDetails ? ds.settleLateDetails() : [];
      return { ended, recorded, added, backdated, revealed, settled };
    },
    detailQuirkCalls(appId: string) {
      const ds = appOf(appId).dataset;
      return ds.details.describe((i) => ds.sessionIdOf(i), () => [...ds.truthCalls()].filter((c) => c.hasTranscription === true).map((c) => c.sessionId));
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        handler.dropPending();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
