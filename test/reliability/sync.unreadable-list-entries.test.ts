import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { afterAll, describe, expect, it } from 'vitest';
import { KEY_ENV, syncWith, tempDir, TEST_KEY, withStore } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * A list entry that does not parse is kept aside in rejected_records. When it still names its call,
 * Get Call may answer the call whole (a service that writes a field one way in List Calls and another
 * in Get Call): such calls were never asked for, not even with detailFetch always, so they stayed out
 * of `calls` for good while every run said ok. Now they are asked for once per run.
 */
const SETTINGS = { pageSize: 50, lookbackHours: 24, concurrency: 4, maxAttempts: 3, requestTimeoutMs: 2_000 } as const;

const tmp = tempDir('callsync-unreadable-entries-');
afterAll(() => tmp.cleanup());

describe('list entries that do not parse but name their call', () => {
  for (const detailFetch of ['always', 'auto'] as const) {
    it(`detailFetch ${detailFetch}: every such call is stored from Get Call, its entry stays in rejected_records, ok`, async () => {
      const service = await FakeCallsService.start({ seed: 61, calls: 200, ongoing: 0, unreadableInList: 20 });
      try {
        const database = join(tmp.dir, `${detailFetch}.db`);
        const r = (await syncWith(settingsAt(service.baseUrls('app1'), database, { ...SETTINGS, detailFetch }))).results[0]!;
        expect(r.status, r.error).toBe('ok');
        const { stored, rejected } = await withStore(database, async ({ db }) => ({
          stored: await db.selectFrom('calls').select(['session_id', 'status', 'details_source']).execute(),
          rejected: await db.selectFrom('rejected_records').select(['record_key', 'endpoint']).execute(),
        }));
        const victims = service.calls.filter((_, i) => i % 20 === 0);
        const unreadable = victims.map((c) => c.sessionId).sort();
        expect(unreadable.length).toBe(10);
        expect(stored.length).toBe(service.calls.length);
        const byId = new Map(stored.map((c) => [c.session_id, c]));
        for (const c of victims) expect(byId.get(c.sessionId)).toMatchObject({ details_source: 'detail', status: c.status });
        expect(rejected.filter((x) => x.endpoint === 'list_calls').map((x) => x.record_key).sort()).toEqual(unreadable);

        // The next run proves its window with those calls in it (listed, if unreadably), lists no more.
        const again = (await syncWith(settingsAt(service.baseUrls('app1'), database, { ...SETTINGS, detailFetch }))).results[0]!;
        expect(again).toMatchObject({ mode: 'incremental', status: 'ok' });
        expect(again.requestsByKind.list).toBeLessThan(r.requestsByKind.list!);

        // `callsync verify` (a user's check) files those entries as rejected, not as changed calls.
        const config = join(tmp.dir, `${detailFetch}.json`);
        writeFileSync(config, JSON.stringify({ database, ...SETTINGS, detailFetch, liveMaxDays: 3650, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...service.baseUrls('app1') }] }));
        const verify = await runCli(['verify', '--config', config, '--format', 'json'], { [KEY_ENV]: TEST_KEY });
        const report = JSON.parse(verify.stdout) as { ok: boolean; apps: { rejected: string[]; changed: string[] }[] };
        expect(report.apps[0]!.changed).toEqual([]);
        expect(report.apps[0]!.rejected).toEqual(unreadable);
        expect(report.ok).toBe(true);
        expect(verify.code).toBe(0);
      } finally {
        await service.close();
      }
    });
  }
});

// Probe round 17 (c): an unreadable entry whose Get Call failed once (a bare 404) was left to the
// listing; older than the next incremental run's window, it was never asked again, that run ok.
describe('an unreadable entry whose Get Call fails once', () => {
  it('is asked again on later runs (the retry list) until stored; no run is ok without it', async () => {
    const service = await FakeCallsService.start({ seed: 62, calls: 137, ongoing: 0, unreadableInList: 15, bare404First: 9 });
    try {
      const database = join(tmp.dir, 'unreadable-404.db');
      const settings = settingsAt(service.baseUrls('app1'), database, { ...SETTINGS, detailFetch: 'auto' });
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status).toBe('partial');
      expect(first.unreadCalls).toBeGreaterThan(0);
      const second = (await syncWith(settings)).results[0]!;
      const stored = new Set((await withStore(database, ({ db }) => db.selectFrom('calls').select('session_id').execute())).map((r) => r.session_id));
      const missing = service.calls.filter((c) => !stored.has(c.sessionId)).map((c) => c.sessionId);
      expect({ status: second.status, missing }).toEqual({ status: 'ok', missing: [] });
    } finally {
      await service.close();
    }
  });
});

describe('a listing none of whose entries can be read', () => {
  it('every entry spells session_id: partial, one line saying none could be read, the watermark not moved', async () => {
    const service = await FakeCallsService.start({ seed: 62, calls: 120, ongoing: 0, snakeSessionId: true });
    try {
      const database = join(tmp.dir, 'snake.db');
      const r = (await syncWith(settingsAt(service.baseUrls('app1'), database, { ...SETTINGS, detailFetch: 'auto' }))).results[0]!;
      expect(r.status).toBe('partial');
      expect(r.error).toMatch(/^[^\n]+$/);
      expect(r.error).toMatch(/none of the 120 entries List Calls showed could be read \(first: list:page\d+#0: sessionId: .*\); they are kept aside in rejected_records/);
      const state = await withStore(database, ({ db }) => db.selectFrom('sync_state').selectAll().execute());
      expect(state).toEqual([]);
      // A dry run says so too.
      const config = join(tmp.dir, 'snake.json');
      writeFileSync(config, JSON.stringify({ database, ...SETTINGS, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...service.baseUrls('app1') }] }));
      const dry = await runCli(['sync', '--dry-run', '--json', '--config', config], { [KEY_ENV]: TEST_KEY });
      expect(dry.code).toBe(1);
      expect(JSON.parse(dry.stdout.trim())).toMatchObject({ status: 'incomplete', listingNote: expect.stringMatching(/^none of the \d+ entries List Calls showed could be read/) });
    } finally {
      await service.close();
    }
  });
});

