import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { resolveConfig, type Settings } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { startSimulator, type FaultProfile, type SimAppSpec, type Simulator } from '../../src/simulator/index.js';
import { openStore, type Store } from '../../src/store/connection.js';
import { systemClock } from '../../src/config/clock.js';
import { runSync, type RunSummary } from '../../src/sync/run-sync.js';
import type { SyncOptions } from '../../src/sync/sync-app.js';

export const TEST_KEY = 'test-key-0123456789abcdef';
export const KEY_ENV = 'CALLSYNC_TEST_KEY';

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(prefix = 'callsync-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The app ids startTestSim gives `apps`: their own, else app1, app2, … by position. */
export function simAppIds(apps: Partial<SimAppSpec>[]): string[] {
  return apps.map((a, i) => a.appId ?? `app${i + 1}`);
}

export async function startTestSim(apps: Partial<SimAppSpec>[] | number, faults: FaultProfile = {}): Promise<Simulator> {
  const list = typeof apps === 'number' ? [{ calls: apps }] : apps;
  const ids = simAppIds(list);
  const specs: SimAppSpec[] = list.map((a, i) => ({
    appId: ids[i]!,
    region: a.region ?? 'us',
    apiKey: a.apiKey ?? TEST_KEY,
    calls: a.calls ?? 500,
    seed: a.seed ?? 42 + i,
    ...(a.keyScope ? { keyScope: a.keyScope } : {}),
    ...(a.rateLimitHeaderStyle ? { rateLimitHeaderStyle: a.rateLimitHeaderStyle } : {}),
    ...(a.unavailableRequests !== undefined ? { unavailableRequests: a.unavailableRequests } : {}),
  }));
  return startSimulator({ apps: specs, faults, port: 0 });
}

/** Config pointing every simulator app at `sim`, with short retries for tests. */
export function testConfig(sim: Simulator, appIds: string[], database: string, extra: Record<string, unknown> = {}, appExtra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    database,
    apps: appIds.map((appId) => ({ appId, region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...sim.baseUrls(appId), ...appExtra })),
    requestTimeoutMs: 2_000,
    // The simulator's clock stands at 2025-12-01 by default while liveMaxDays is measured on the
    // wall clock: its few live calls would be a year old, hence stale. Tests about staleness set it.
    liveMaxDays: 3650,
    ...extra,
  };
}

export function testSettings(sim: Simulator, appIds: string[], database: string, extra: Record<string, unknown> = {}, env: Record<string, string> = { [KEY_ENV]: TEST_KEY }): Settings {
  return resolveConfig(testConfig(sim, appIds, database, extra), { CALLSYNC_RETRY_BASE_MS: '5', ...env });
}

/** Runs one in-process sync with the real client, a real Agent and a real SQLite file. */
export async function syncWith(settings: Settings, opts: Omit<SyncOptions, 'runId'> = {}): Promise<RunSummary> {
  const store = await openStore(settings.database);
  const dispatcher = new Agent({ connections: settings.concurrency + 2, keepAliveTimeout: 5_000 });
  try {
    return await runSync({ db: store.db, dispatcher, clock: systemClock, log: silentLogger }, settings, opts);
  } finally {
    await dispatcher.close();
    await store.close();
  }
}

export async function withStore<T>(path: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(path);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
