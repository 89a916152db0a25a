import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { describeSettings, resolveConfig } from '../../src/config/load.js';

const base = { database: 'file.db', apps: [{ appId: 'app1', region: 'us', apiKeyEnv: 'KEY1' }] };
const err = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('config resolution: flags over environment over file over defaults', () => {
  it('applies defaults', () => {
    const s = resolveConfig(base, {});
    expect(s).toMatchObject({ concurrency: 8, lookbackHours: 72, detailFetch: 'auto', pageSize: 100, logLevel: 'warn', reconcileToleranceMinutes: 0.01 });
    expect(s.schedule).toEqual({ cron: '0 2 * * *', timezone: 'UTC', reconcile: true, exportDayOfMonth: 1, exportDir: 'exports', exportFormat: 'csv' });
    expect(s.apps[0]).toMatchObject({ callsBaseUrl: 'https://app1.call-us.cometchat.io/v3', chatBaseUrl: 'https://app1.api-us.cometchat.io/v3', requestsPerMinute: 500 });
  });

  it('lets the environment beat the file and flags beat the environment', () => {
    const env = { CALLSYNC_DATABASE: 'env.db', CALLSYNC_LOG_LEVEL: 'info', CALLSYNC_CONCURRENCY: '3', CALLSYNC_SCHEDULE_CRON: '5 4 * * *' };
    const fromEnv = resolveConfig({ ...base, concurrency: 12 }, env);
    expect(fromEnv).toMatchObject({ database: 'env.db', logLevel: 'info', concurrency: 3 });
    expect(fromEnv.schedule.cron).toBe('5 4 * * *');
    expect(resolveConfig(base, env, 'f', { database: 'flag.db', logLevel: 'debug' })).toMatchObject({ database: 'flag.db', logLevel: 'debug' });
  });

  it('names the field, and where a bad value came from, in one line', () => {
    expect(err(() => resolveConfig({ ...base, concurrency: 0 }, {}, 'callsync.config.json'))).toMatch(/^callsync\.config\.json: concurrency: /);
    expect(err(() => resolveConfig(base, { CALLSYNC_CONCURRENCY: '500' }))).toMatch(/^CALLSYNC_CONCURRENCY: concurrency: /);
    expect(err(() => resolveConfig(base, { CALLSYNC_CONCURRENCY: 'lots' }))).toBe('CALLSYNC_CONCURRENCY="lots": expected a number');
    expect(err(() => resolveConfig({ ...base, apps: [{ ...base.apps[0], region: 'mars' }] }, {}))).toMatch(/apps\[0\]\.region/);
    expect(err(() => resolveConfig({ ...base, apps: [{ ...base.apps[0], callsBaseUrl: 'ftp://x/v3' }] }, {}))).toMatch(/apps\[0\]\.callsBaseUrl: must be an http\(s\) URL ending in \/v3/);
    expect(err(() => resolveConfig({ ...base, apps: [] }, {}))).toMatch(/apps: configure at least one app/);
    expect(err(() => resolveConfig([], {}))).toMatch(/must be a JSON object/);
    for (const m of [err(() => resolveConfig({ ...base, concurrency: 0 }, {}))]) expect(m.split('\n')).toHaveLength(1);
  });

  it('rejects unknown fields with a did-you-mean', () => {
    expect(err(() => resolveConfig({ ...base, concurency: 4 }, {}, 'c.json'))).toBe('c.json: (top level): unknown field "concurency" (did you mean "concurrency"?); remove it or fix its name (the fields are in the README)');
    expect(err(() => resolveConfig({ ...base, apps: [{ ...base.apps[0], apiKey: 'secret-in-file' }] }, {}))).toMatch(/apps\[0\]: unknown field "apiKey" \(did you mean "apiKeyEnv"\?\)/);
    expect(err(() => resolveConfig({ ...base, schedule: { cronn: '* * * * *' } }, {}))).toMatch(/schedule: unknown field "cronn" \(did you mean "cron"\?\)/);
    expect(err(() => resolveConfig({ ...base, zzzzzz: 1 }, {}))).toMatch(/unknown field "zzzzzz"; remove it/);
  });

  it('shows keys only as *** and names missing ones', () => {
    const s = resolveConfig({ ...base, apps: [...base.apps, { appId: 'app2', region: 'eu', apiKeyEnv: 'KEY2' }] }, { KEY1: 'super-secret-value-1' });
    const text = JSON.stringify(describeSettings(s));
    expect(text).not.toContain('super-secret-value-1');
    expect(text).toContain('"apiKey":"***"');
    expect(text).toContain('(missing: environment variable KEY2 is not set)');
    expect(String(s.apps[0]!.apiKey)).toBe('***');
    expect(JSON.stringify(s.apps[0])).not.toContain('super-secret');
  });
});
