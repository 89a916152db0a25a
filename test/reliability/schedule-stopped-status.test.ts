import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/config/clock.js';
import { resolveConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { runScheduledTick } from '../../src/schedule/scheduled-tick.js';
import { openStore } from '../../src/store/connection.js';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, TEST_KEY, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from './support/fake-calls-service.js';

/**
 * A schedule that stopped (its process gone, a container not restarted) left `callsync status`
 * saying `healthy`, exit 0, for as long as nobody looked: every run it saw had ended ok, only long
 * ago (probe78 left it). Now a whole slot passed since the last tick, with no sync running, is
 * `SCHEDULE BEHIND`, unhealthy, exit 1; the next tick clears it.
 */
const tmp = tempDir('schedule-stopped-');
afterAll(() => tmp.cleanup());
const ENV = { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' };

/** One tick of `callsync schedule` as it runs at `atMs` (the clock moving on from there as real time does). */
async function tickAt(cfg: Record<string, unknown>, atMs: number): Promise<void> {
  const settings = resolveConfig(cfg, ENV);
  const started = Date.now();
  const clock: Clock = { ...systemClock, now: () => atMs + (Date.now() - started) };
  const store = await openStore(settings.database);
  const dispatcher = new Agent({ keepAliveTimeout: 5_000 });
  try {
    const r = await runScheduledTick({ db: store.db, dispatcher, clock, log: silentLogger }, settings);
    expect(r.skipped ? 'skipped' : r.summary.results.map((x) => x.status).join()).toBe('ok');
  } finally {
    await dispatcher.close();
    await store.close();
  }
}

describe('status of a schedule that stopped', () => {
  it('is unhealthy once a whole slot passed without a tick, and healthy again after the next', async () => {
    const service = await FakeCallsService.start({ seed: 79, calls: 20, ongoing: 0 });
    try {
      const database = join(tmp.dir, 'stopped.db');
      const cfg = {
        database,
        apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...service.baseUrls('app1') }],
        requestTimeoutMs: 2_000,
        liveMaxDays: 3650,
        schedule: { cron: '0 2 * * *', timezone: 'UTC', exportDayOfMonth: 0, reconcile: false },
      };
      const config = join(tmp.dir, 'stopped.json');
      writeFileSync(config, JSON.stringify(cfg));
      const status = (): Promise<{ code: number | null; stdout: string }> => runCli(['status', '--config', config], ENV);

      // Ticked a day ago: the slot after it may still be running or just ended; healthy.
      await tickAt(cfg, Date.now() - 86_400_000);
      const fresh = await status();
      expect([fresh.code, fresh.stdout.trim().split('\n').pop()], fresh.stdout).toEqual([0, 'healthy']);

      // The last tick three days ago, every run ok: two nightly slots went by without one.
      await tickAt(cfg, Date.now() - 3 * 86_400_000);
      const stopped = await status();
      expect(stopped.code, stopped.stdout).toBe(1);
      expect(stopped.stdout).toMatch(/^SCHEDULE BEHIND: the last tick ran at \S+; the slots at \S+T02:00:00Z and \S+T02:00:00Z passed without one/m);
      expect(stopped.stdout.trim().split('\n').pop()).toBe('UNHEALTHY');
      const json = await runCli(['status', '--config', config, '--format', 'json'], ENV);
      expect(JSON.parse(json.stdout)).toMatchObject({ healthy: false, scheduleBehind: { missed: [expect.any(String), expect.any(String)] } });

      // The schedule runs again: healthy.
      await tickAt(cfg, Date.now());
      const again = await status();
      expect([again.code, again.stdout.trim().split('\n').pop()], again.stdout).toEqual([0, 'healthy']);
    } finally {
      await service.close();
    }
  });
});
