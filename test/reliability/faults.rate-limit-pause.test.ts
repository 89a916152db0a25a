import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';
import { relay, startProxy, viaProxy } from './support/servers.js';

/**
 * A 200 answer saying no requests remain (X-RateLimit-Remaining: 0) until its X-RateLimit-Reset
 * holds the app's requests until then (at most 5 minutes at a time). A server saying so with an
 * hourly reset held a sync 5 minutes a wave without a word, under --json too (probe round 9, F10):
 * such a pause is now said, like a retry's wait.
 */
describe('a server saying no requests remain until its reset', () => {
  it('the pause is said on stderr with how long, and the sync then ends ok, equal to the truth', async () => {
    const tmp = tempDir('callsync-pause-');
    const sim = await startTestSim([{ calls: 60 }]);
    let first = true;
    const proxy = await startProxy(sim.url, async (_req, pass) => {
      const up = await pass();
      const r = relay(up);
      const spent = first;
      first = false;
      // The first answer only: the window is spent for the next 6 seconds.
      return { ...r, headers: { ...r.headers, 'x-ratelimit-remaining': spent ? '0' : '1000', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 6) } };
    });
    try {
      const database = join(tmp.dir, 'paused.db');
      const config = join(tmp.dir, 'callsync.json');
      writeFileSync(config, JSON.stringify({ database, detailFetch: 'always', concurrency: 4, pageSize: 50, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 'unlimited', ...viaProxy(proxy.url, 'app1') }] }));
      const res = await runCli(['sync', '--config', config, '--json'], { [KEY_ENV]: TEST_KEY });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toMatch(/app1 \(us\): waiting for 127\.0\.0\.1:\d+: next request in [\d.]+ ?s \(the service says no requests remain until its X-RateLimit-Reset\)/);
      await withStore(database, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
    } finally {
      await proxy.close();
      await sim.close();
      tmp.cleanup();
    }
  });
});
