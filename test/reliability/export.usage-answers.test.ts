import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, syncWith, tempDir, TEST_KEY } from '../helpers/harness.js';
import { FakeCallsService, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * `export billing --with-usage` sets the service's own Usage Metrics beside the synced minutes. An
 * answer whose metrics were spelt otherwise (camelCase), or absent, gave 0 minutes of usage with
 * exit 0 (a hostile fake, probe round 4): a finance user would read "the service billed nothing".
 */
const tmp = tempDir('callsync-usage-answers-');
afterAll(() => tmp.cleanup());

async function exportWithUsage(usage: Wire) {
  const service = await FakeCallsService.start({ seed: 91, calls: 40, ongoing: 0, spanHours: 1, usage });
  try {
    const database = join(tmp.dir, `usage-${Object.keys(usage).length}-${JSON.stringify(usage).length}.db`);
    expect((await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'auto' }))).results[0]!.status).toBe('ok');
    const month = new Date(Math.max(...service.calls.map((c) => c.initiatedAt)) * 1000).toISOString().slice(0, 7);
    const config = join(tmp.dir, 'usage.json');
    writeFileSync(config, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...service.baseUrls('app1') }] }));
    return await runCli(['export', 'billing', '--config', config, '--month', month, '--with-usage', '--format', 'json'], { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' });
  } finally {
    await service.close();
  }
}

describe('export billing --with-usage reads what the Usage Metrics answer holds, or says it cannot', () => {
  it('metrics in camelCase, no range echoed: the figures are read, and a warning says the range was not echoed', async () => {
    const res = await exportWithUsage({ data: { metrics: { audioMinutes: 4321.5, videoMinutes: 12.25, recordedMinutes: 3 } } });
    expect(res.code, res.stderr).toBe(0);
    const all = (JSON.parse(res.stdout) as Record<string, unknown>[]).find((r) => r.type === 'all')!;
    expect(all).toMatchObject({ usage_audio_minutes: 4321.5, usage_video_minutes: 12.25, usage_recorded_minutes: 3 });
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^callsync: warning: app app1 \(us\): the service did not echo the range it read/)]);
  });

  it('no minutes in the metrics: exit 1, one line naming the app and what the answer held, nothing written', async () => {
    const res = await exportWithUsage({ data: { metrics: { active_users: 7 }, time_range: { fromDate: 0, toDate: 0 } } });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^callsync: export billing --with-usage: app app1 \(us\): the Usage Metrics answer carries no audio_minutes or video_minutes \(metrics: active_users\); usage not taken/);
  });
});
