import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, syncWith, tempDir, TEST_KEY } from '../helpers/harness.js';
import { resolvePeriod } from '../../src/export/period.js';
import { FakeCallsService, type FakeCall } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe75: `export billing --with-usage` of a period not yet ended (month to date) sets the
 * service's usage, which counts calls up to the moment it is asked, beside the database's figures,
 * which end at the last sync. Calls made since then were in the delta with nothing said: the app not
 * stale (its sync is recent), every column filled, exit 0, a delta of 100 % of those calls' minutes
 * that reads as "we are billed for minutes we did not use". The export now says the period is open.
 */
const tmp = tempDir('probe75-open-usage-');
afterAll(() => tmp.cleanup());

const minutesOf = (c: FakeCall): number => c.participants.reduce((n, p) => n + p.totalDuration, 0);

describe('--with-usage of a period under way says the two figures end at different times', () => {
  it('a call made after the sync is in the service usage only: a line says the period has not ended and when the database was synced', async () => {
    const service = await FakeCallsService.start({ seed: 752, calls: 20, ongoing: 0, spanHours: 1 });
    try {
      const database = join(tmp.dir, 'open.db');
      expect((await syncWith(settingsAt(service.baseUrls(), database, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      // After the sync: one more call, which the service's usage counts and the database cannot.
      service.addCall({ at: Math.floor(Date.now() / 1000) - 120, status: 'ended' });
      const now = new Date();
      const month = now.toISOString().slice(0, 7);
      const period = resolvePeriod({ month });
      const held = service.calls.filter((c) => (c.startedAt ?? c.initiatedAt) >= period.start);
      const audio = held.reduce((s, c) => s + c.participants.reduce((n, p) => n + p.totalAudioMinutes, 0), 0);
      const video = held.reduce((s, c) => s + c.participants.reduce((n, p) => n + p.totalVideoMinutes, 0), 0);
      service.opts.usage = { data: { metrics: { audio_minutes: audio, video_minutes: video }, time_range: { fromDate: period.start * 1000, toDate: period.end * 1000 } } };
      const config = join(tmp.dir, 'open.json');
      writeFileSync(config, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...service.baseUrls() }] }));
      const res = await runCli(['export', 'billing', '--config', config, '--month', month, '--with-usage', '--format', 'json'], { [KEY_ENV]: TEST_KEY, CALLSYNC_RETRY_BASE_MS: '5' });
      expect(res.code, res.stderr).toBe(0);
      const total = (JSON.parse(res.stdout) as Record<string, number | string>[]).find((r) => r.row_kind === 'total')!;
      expect(Number(total.stale)).toBe(0);
      // The delta is the new call's minutes (and nothing else) ...
      const last = service.calls[service.calls.length - 1]!;
      expect(Number(total.usage_audio_delta_minutes) + Number(total.usage_video_delta_minutes)).toBeCloseTo(-minutesOf(last), 3);
      // ... and the export says why there can be one.
      expect(res.stderr).toMatch(new RegExp(`^callsync: warning: app app1 \\(us\\): ${month} has not ended: the service's usage counts its calls up to now, the database holds them up to its last successful sync \\(\\d{4}-\\d{2}-\\d{2}T[\\d:]+Z\\)`, 'm'));
    } finally {
      await service.close();
    }
  }, 60_000);
});
