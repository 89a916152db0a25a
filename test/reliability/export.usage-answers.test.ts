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

/** `monthAfter`: export the month after the calls' (none stored in it) instead of theirs. */
async function exportWithUsage(usage: Wire, opts: { monthAfter?: boolean } = {}) {
  const service = await FakeCallsService.start({ seed: 91, calls: 40, ongoing: 0, spanHours: 1, usage });
  try {
    const database = join(tmp.dir, `usage-${Object.keys(usage).length}-${JSON.stringify(usage).length}.db`);
    expect((await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'auto' }))).results[0]!.status).toBe('ok');
    const last = new Date(Math.max(...service.calls.map((c) => c.initiatedAt)) * 1000);
    const month = (opts.monthAfter ? new Date(Date.UTC(last.getUTCFullYear(), last.getUTCMonth() + 1, 1)) : last).toISOString().slice(0, 7);
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
    // The calls' month is the current one, but for a run in the first hour of a month: then the
    // line that says the period has not ended (probe75-usage-open-period) is not printed.
    expect(res.stderr.trim().split('\n').filter((l) => !/ has not ended: /.test(l))).toEqual([
      expect.stringMatching(/^callsync: warning: app app1 \(us\): the service did not echo the range it read/),
    ]);
  });

  it('no minutes in the metrics: exit 1, one line naming the app and what the answer held, nothing written', async () => {
    const res = await exportWithUsage({ data: { metrics: { active_users: 7 }, time_range: { fromDate: 0, toDate: 0 } } });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^callsync: export billing --with-usage: app app1 \(us\): the Usage Metrics answer carries no audio_minutes or video_minutes \(metrics: active_users\); usage not taken/);
  });

  const range = { fromDate: 0, toDate: 0 };
  /** The range of `month` as the service echoes it in the published example (ms). */
  const echo = (month: string) => {
    const [y, m] = month.split('-').map(Number) as [number, number];
    return { fromDate: Date.UTC(y, m - 1, 1), toDate: Date.UTC(y, m, 1) };
  };
  const all = (stdout: string) => (JSON.parse(stdout) as Record<string, unknown>[]).find((r) => r.type === 'all')!;

  // Probe round 16 (b): each of these was exit 0 with a figure the service never gave, or without the service's.
  it('video_minutes left out: its column and delta stay empty (not 0), audio is compared, a warning names it', async () => {
    const res = await exportWithUsage({ data: { metrics: { audio_minutes: 39.8333 } } });
    expect(res.code, res.stderr).toBe(0);
    expect(all(res.stdout)).toMatchObject({ usage_audio_minutes: 39.8333, usage_video_minutes: null, usage_video_delta_minutes: null, usage_recorded_minutes: null });
    expect(typeof all(res.stdout).usage_audio_delta_minutes).toBe('number');
    expect(res.stderr).toMatch(/^callsync: warning: app app1 \(us\): the Usage Metrics answer carries no video_minutes; usage_video_minutes and its delta are left empty$/m);
  });

  it('negative minutes: exit 1, one line naming them, nothing written', async () => {
    const res = await exportWithUsage({ data: { metrics: { audio_minutes: -39.8333, video_minutes: 2 } } });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/app app1 \(us\): the Usage Metrics answer states negative minutes \(audioMinutes -39.8333\); usage not taken/);
  });

  it('another range echoed (September for October): exit 1, nothing written, the line says the figures are for another period', async () => {
    const res = await exportWithUsage({ data: { metrics: { audio_minutes: 5, video_minutes: 1 }, time_range: echo('2020-09') } });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/app app1 \(us\): the service echoed the range 1598918400000–1601510400000, not \d+–\d+: its figures are for another period; usage not taken \(check usageTimestampUnit\)/);
  });

  it('an app with usage but no calls in the month gets a total row holding the service figures (it was left out)', async () => {
    const res = await exportWithUsage({ data: { metrics: { audio_minutes: 250, video_minutes: 40 } } }, { monthAfter: true });
    expect(res.code, res.stderr).toBe(0);
    expect(all(res.stdout)).toMatchObject({ app_id: 'app1', row_kind: 'total', calls: 0, usage_audio_minutes: 250, usage_video_minutes: 40, usage_audio_delta_minutes: -250, usage_video_delta_minutes: -40, stale: 0 });
  });

  it('zero usage while the database holds minutes: a warning (a range read in another unit echoes as sent), figures kept', async () => {
    const res = await exportWithUsage({ data: { metrics: { audio_minutes: 0, video_minutes: 0 }, time_range: range } });
    // The echo (0–0) is another range: refused. Without an echo, the zero figures are shown, and said.
    expect(res.code).toBe(1);
    const silent = await exportWithUsage({ data: { metrics: { audio_minutes: 0, video_minutes: 0 } } });
    expect(silent.code, silent.stderr).toBe(0);
    expect(all(silent.stdout)).toMatchObject({ usage_audio_minutes: 0, usage_video_minutes: 0 });
    expect(silent.stderr).toMatch(/^callsync: warning: app app1 \(us\): the service reports 0 minutes for \d{4}-\d{2} while the database holds [\d.]+ participant minutes; if the service read the range in another unit, check usageTimestampUnit$/m);
  });

  it('a range echoed as ISO text is read (it failed the whole export as an unknown shape)', async () => {
    const res = await exportWithUsage({ data: { metrics: { audio_minutes: 1, video_minutes: 2 }, time_range: { fromDate: '1999-01-01T00:00:00Z', toDate: '1999-02-01T00:00:00Z' } } });
    // Read, and found to be another period than the month asked: refused by its content, not its shape.
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/the service echoed the range 915148800–917827200, not/);
    expect(res.stderr).not.toMatch(/unknown shape/);
  });
});
