import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, syncWith, tempDir, TEST_KEY, withStore } from '../helpers/harness.js';
import { AUDITS_PER_RUN, FIRST_AUDITS } from '../../src/sync/list-audit.js';
import { FakeCallsService, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * `sync --dry-run` tells a user how many Get Call requests a sync would make (what a plan's rate
 * limit is spent on). It plans pages with the sync's own planner, but was not given two of the
 * planner's inputs the sync has: the media audit (up to AUDITS_PER_RUN Gets a run in auto mode, and
 * every entry with media once entries are known to leave media out) and the recheck of recent calls
 * stored as not found. Its estimate then fell short of what the sync did.
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;

const tmp = tempDir('callsync-dry-estimate-');
afterAll(() => tmp.cleanup());

interface DryJson {
  status: string;
  getCalls: number;
  followUpGetCalls: number;
  groups: number;
  groupsUnnamed: number;
}

/** `callsync sync --dry-run --json` as a user runs it, against the same config as the sync. */
async function dryRun(service: FakeCallsService, database: string, flags: string[] = [], settings: Record<string, unknown> = SETTINGS): Promise<DryJson> {
  return JSON.parse((await dryRunOut(service, database, [...flags, '--json'], settings)).split('\n').find((l) => l.startsWith('{'))!) as DryJson;
}

/** The same, its stdout as it is (`--json` among `flags` or not). */
async function dryRunOut(service: FakeCallsService, database: string, flags: string[], settings: Record<string, unknown> = SETTINGS): Promise<string> {
  const config = join(tmp.dir, `${database.replace(/\W/g, '_')}.json`);
  writeFileSync(config, JSON.stringify({
    database, ...settings, liveMaxDays: 3650,
    apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...service.baseUrls('app1') }],
  }));
  const res = await runCli(['sync', '--dry-run', ...flags, '--config', config], { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' });
  expect(res.stderr).toBe('');
  return res.stdout.trim();
}

async function start(fake: FakeOptions): Promise<FakeCallsService> {
  return FakeCallsService.start({ calls: 300, ongoing: 0, ...fake });
}

describe('sync --dry-run counts the Gets the sync makes', () => {
  it('auto mode, complete entries with recordings: the audit Gets are in the estimate, which the sync then makes', async () => {
    const service = await start({ seed: 42, recordings: { every: 1, listed: 'all' } });
    try {
      const database = join(tmp.dir, 'audit.db');
      const dry = await dryRun(service, database);
      expect(dry).toMatchObject({ status: 'ok' });
      // After the listing: the spread audits (one for all entries, one for those with media) whose
      // drawn entry the listing ended before; which entries are drawn differs, how many does not.
      expect(dry.followUpGetCalls).toBeLessThanOrEqual(2);
      expect(dry.getCalls).toBeGreaterThan(FIRST_AUDITS);
      expect(dry.getCalls + dry.followUpGetCalls).toBeLessThanOrEqual(AUDITS_PER_RUN);
      const summary = await syncWith(settingsAt(service.baseUrls('app1'), database, SETTINGS));
      expect(summary.results[0]).toMatchObject({ status: 'ok', detailFetches: dry.getCalls + dry.followUpGetCalls });
    } finally {
      await service.close();
    }
  });

  it('once entries are known to leave media out: new entries with media are counted as Gets, which the sync then makes', async () => {
    const service = await start({ seed: 41, recordings: { every: 1, listed: 'first' } });
    try {
      const database = join(tmp.dir, 'omits.db');
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      // Complete-looking new entries, each listing its one recording whole: trusted before the audit
      // found the omission, fetched after it.
      const at = Math.floor(Date.now() / 1000) - 600;
      for (let k = 0; k < 3; k++) {
        const added = service.addCall({ at: at + k, status: 'ended' });
        Object.assign(added, { hasRecording: true, recordings: [{ rid: `${added.sessionId}-r0`, recording_url: 'https://rec.invalid/0.mp4', startTime: added.startedAt, endTime: added.endedAt, duration: 0.5 }] });
      }
      const dry = await dryRun(service, database);
      expect(dry.status).toBe('ok');
      expect(dry.getCalls).toBeGreaterThanOrEqual(3);
      const summary = await syncWith(settings);
      expect(summary.results[0]).toMatchObject({ status: 'ok', mode: 'incremental', detailFetches: dry.getCalls });
    } finally {
      await service.close();
    }
  });

  it('recent calls stored as not found that the listing still shows: the recheck is in the estimate', async () => {
    // Entries without the details: one carrying the whole call is stored from it, not marked (probe79).
    const service = await start({ seed: 43, notFoundFirst: 5, listMinimal: true });
    try {
      const database = join(tmp.dir, 'notfound.db');
      const always = { ...SETTINGS, detailFetch: 'always' };
      const settings = settingsAt(service.baseUrls('app1'), database, always);
      expect((await syncWith(settings)).results[0]!.status).toBe('partial');
      const notFound = await withStore(database, ({ db }) => db.selectFrom('calls').select('session_id').where('not_found_at', 'is not', null).execute());
      expect(notFound.length).toBe(5);
      const dry = await dryRun(service, database, [], always);
      expect(dry.status).toBe('ok');
      expect(dry.getCalls).toBeGreaterThanOrEqual(5);
      const summary = await syncWith(settings);
      expect(summary.results[0]!.status).toBe('ok');
      expect(summary.results[0]!.detailFetches).toBe(dry.getCalls + dry.followUpGetCalls);
    } finally {
      await service.close();
    }
  });

  it('entries that do not say who a call went to: the groups figure is a lower bound, and says so', async () => {
    // A group call's entry without receiverType or receiver: a sync learns its group from Get Call.
    const service = await start({ seed: 44, listEntry: ({ receiverType: _t, receiver: _r, ...e }) => e });
    try {
      const database = join(tmp.dir, 'unnamed.db');
      const dry = await dryRun(service, database);
      expect(dry).toMatchObject({ status: 'ok', groups: 0, groupsUnnamed: 300 });
      expect(await dryRunOut(service, database, [])).toMatch(/and list the members of at least 0 groups \(300 entries do not say who the call went to\)/);
      const summary = await syncWith(settingsAt(service.baseUrls('app1'), database, SETTINGS));
      expect(summary.results[0]!.status).toBe('ok');
      expect(summary.results[0]!.groupsSynced).toBeGreaterThan(dry.groups);
      // Entries that name their party: the figure is exact (the sync lists as many groups).
      const named = await start({ seed: 44 });
      try {
        const other = join(tmp.dir, 'named.db');
        const exact = await dryRun(named, other);
        expect(exact).toMatchObject({ groupsUnnamed: 0 });
        expect(exact.groups).toBeGreaterThan(0);
        expect((await syncWith(settingsAt(named.baseUrls('app1'), other, SETTINGS))).results[0]!.groupsSynced).toBe(exact.groups);
      } finally {
        await named.close();
      }
    } finally {
      await service.close();
    }
  });
});
