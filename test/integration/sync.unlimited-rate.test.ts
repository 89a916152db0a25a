import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, testConfig, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

/** requestsPerMinute "unlimited" (issue 16): what `npm run bench` runs, against a local simulator. */
describe('callsync sync with requestsPerMinute "unlimited"', () => {
  test.override({ simApps: [{ calls: 600 }] });

  it('syncs the simulator unpaced to its ground truth', async ({ sim, database, dir }) => {
    const cfg = join(dir, 'unlimited.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], database, { detailFetch: 'always' }, { requestsPerMinute: 'unlimited' })));
    const res = await runCli(['sync', '--config', cfg, '--no-progress'], { [KEY_ENV]: TEST_KEY });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^app1 \(us\): ok \[full\]/);
    await withStore(database, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
  });

  it('is refused for the service\'s own hosts: one line naming the app, exit 2, nothing sent', async ({ dir }) => {
    const cfg = join(dir, 'service.json');
    writeFileSync(cfg, JSON.stringify({ database: join(dir, 'x.db'), apps: [{ appId: 'main', region: 'eu', apiKeyEnv: KEY_ENV, requestsPerMinute: 'unlimited' }] }));
    const res = await runCli(['sync', '--config', cfg, '--no-progress'], { [KEY_ENV]: TEST_KEY });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    const lines = res.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('apps[0].requestsPerMinute: app main talks to the service\'s own hosts (*.cometchat.io)');
  });
});
