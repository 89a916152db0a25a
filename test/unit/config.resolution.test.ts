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
    expect(s.schedule).toEqual({
      cron: '0 2 * * *', timezone: 'UTC', reconcile: true, exportDayOfMonth: 1, exportDir: 'exports', exportFormat: 'csv',
      workerConcurrency: 4, retryLimit: 3, retryDelaySeconds: 300, retryBackoff: true, jobExpirySeconds: 14_400, pollIntervalSeconds: 2, expiryCheckSeconds: 60,
    });
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
    // A number that does not parse is no longer refused on its own: the schema says what it takes.
    expect(err(() => resolveConfig(base, { CALLSYNC_CONCURRENCY: 'lots' }))).toBe('CALLSYNC_CONCURRENCY: concurrency: expected a whole number from 1 to 64 (got "lots")');
    expect(err(() => resolveConfig({ ...base, apps: [{ ...base.apps[0], region: 'mars' }] }, {}))).toMatch(/apps\[0\]\.region/);
    expect(err(() => resolveConfig({ ...base, apps: [{ ...base.apps[0], callsBaseUrl: 'ftp://x/v3' }] }, {}))).toMatch(/apps\[0\]\.callsBaseUrl: must be an http\(s\) URL ending in \/v3/);
    expect(err(() => resolveConfig({ ...base, apps: [] }, {}))).toMatch(/apps: list at least one app .*\(got an empty list\)$/);
    expect(err(() => resolveConfig([], {}))).toMatch(/must be a JSON object/);
    for (const m of [err(() => resolveConfig({ ...base, concurrency: 0 }, {}))]) expect(m.split('\n')).toHaveLength(1);
    // The schedule's cron and time zone too (their lines named only schedule.cron and schedule.timezone).
    expect(err(() => resolveConfig(base, { CALLSYNC_SCHEDULE_CRON: 'nightly', CALLSYNC_SCHEDULE_TIMEZONE: 'Mars/Base' })).split('\n')).toEqual([
      'CALLSYNC_SCHEDULE_CRON: schedule.cron: is not a valid cron expression (five fields, or six with seconds first; day names of three letters); e.g. "0 2 * * *" for 02:00 every night (got "nightly")',
      'CALLSYNC_SCHEDULE_TIMEZONE: schedule.timezone: is not an IANA time zone; e.g. "UTC" or "Europe/Berlin" (got "Mars/Base")',
    ]);
    expect(err(() => resolveConfig({ ...base, schedule: { cron: '61 * * * *' } }, {}, 'c.json'))).toMatch(/^c\.json: schedule\.cron: is not a valid cron expression/);
    // node-cron takes these, pg-boss's cron-parser does not: config check passed them and `schedule`
    // on PostgreSQL then stopped without naming the variable (probe round 21 #10).
    // The expression is quoted back whole: "0 2 * * Monday" read "(got a text value)", which the
    // formatter writes for a value that could be a key (probe round 22).
    for (const cron of ['0 2 * * Monday', '5-1 * * * *']) {
      expect(err(() => resolveConfig(base, { CALLSYNC_SCHEDULE_CRON: cron }))).toBe(`CALLSYNC_SCHEDULE_CRON: schedule.cron: is not a valid cron expression (five fields, or six with seconds first; day names of three letters); e.g. "0 2 * * *" for 02:00 every night (got ${JSON.stringify(cron)})`);
    }
    for (const cron of ['0 2 * * MON', '0 2 * * mon-fri', '0 0 2 * * *', '*/15 * * * *', '0 2 1 * *', '0 2 L * *', '0 2 ? * 5']) expect(resolveConfig(base, { CALLSYNC_SCHEDULE_CRON: cron }).schedule.cron).toBe(cron);
    // Both schedulers read these, differently (probe round 22): a day of the month and of the week
    // (node-cron: both must match, Friday the 13th; cron-parser: either, every Friday and every
    // 13th), and seconds that tick more than once a minute (pg-boss sends at most one a minute).
    for (const cron of ['0 2 13 * 5', '0 2 1 * 1', '0 2 L * MON']) {
      expect(err(() => resolveConfig({ ...base, schedule: { cron } }, {}, 'c.json'))).toMatch(/^c\.json: schedule\.cron: names both a day of the month and a day of the week, which the two schedulers read differently \(both must match, or either may\); restrict one and leave the other \*/);
    }
    for (const cron of ['*/20 * * * * *', '* 0 2 * * *', '0,30 0 2 * * *']) {
      expect(err(() => resolveConfig({ ...base, schedule: { cron } }, {}, 'c.json'))).toMatch(/^c\.json: schedule\.cron: ticks more than once a minute \(its seconds field\); give one second/);
    }
  });

  // Probe round 17 (b): 0x10 was read as 16 hours, 0b11 as 3.
  it('reads numbers from the environment in decimal only', () => {
    expect(err(() => resolveConfig(base, { CALLSYNC_LOOKBACK_HOURS: '0x10' }))).toBe('CALLSYNC_LOOKBACK_HOURS: lookbackHours: expected a number from 0 to 8760 (got "0x10")');
    expect(err(() => resolveConfig(base, { CALLSYNC_CONCURRENCY: '0b11' }))).toMatch(/^CALLSYNC_CONCURRENCY: concurrency: /);
    expect(resolveConfig(base, { CALLSYNC_LOOKBACK_HOURS: '1.5e1' }).lookbackHours).toBe(15);
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

describe('config errors: every problem at once, in plain words', () => {
  it('lists each problem on its own line, naming the field, what it takes and what it got', () => {
    const bad = {
      apps: [
        { appId: 'app1', region: 'uk', apiKeyEnv: 'KEY1', requestsPerMinute: 0 },
        { appId: 'app2', region: 'eu' },
      ],
      concurrency: 'abc',
      detailFetch: 'sometimes',
      concurency: 3,
    };
    let e: unknown;
    try {
      resolveConfig(bad, { CALLSYNC_LOOKBACK_HOURS: '-5' }, 'c.json');
    } catch (caught) {
      e = caught;
    }
    expect(e).toBeInstanceOf(ConfigError);
    expect([...(e as ConfigError).problems].sort()).toEqual(
      [
        'c.json: apps[0].region: must be one of us, eu, in (got "uk")',
        'c.json: apps[0].requestsPerMinute: expected a whole number from 1 to 100000 or "unlimited" (got 0)',
        'c.json: apps[1].apiKeyEnv: required: expected a text value in quotes',
        'c.json: concurrency: expected a whole number from 1 to 64 (got "abc")',
        'CALLSYNC_LOOKBACK_HOURS: lookbackHours: expected a number from 0 to 8760 (got -5)',
        'c.json: detailFetch: must be one of auto, always (got "sometimes")',
        'c.json: (top level): unknown field "concurency" (did you mean "concurrency"?); remove it or fix its name (the fields are in the README)',
      ].sort(),
    );
    expect((e as Error).message.split('\n')).toHaveLength(7);
  });

  it('says a missing apps list is required', () => {
    expect(err(() => resolveConfig({ database: 'x.db' }, {}))).toBe('config: apps: required: list at least one app ({ "appId", "region", "apiKeyEnv" })');
  });

  it('reports the cross-field problems with the schema ones, and never quotes a pasted key', () => {
    const key = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
    const message = err(() => resolveConfig({ apps: [{ appId: 'app1', region: 'us', apiKeyEnv: key }, { appId: 'app1', region: 'us', apiKeyEnv: 'K' }], pageSize: 0 }, {}, 'c.json'));
    expect(message.split('\n')).toEqual([
      'c.json: pageSize: expected a whole number from 1 to 1000 (got 0)',
      'c.json: apps[0].apiKeyEnv: looks like an API key, not the NAME of an environment variable; put the key in a variable (e.g. COMETCHAT_KEY_MAIN) and write that name here',
      'c.json: apps[1]: app app1 in region us is listed twice (also apps[0]); remove one entry',
    ]);
    expect(message).not.toContain(key);
  });
});

describe('a relative database path in a config file', () => {
  const app = { appId: 'app1', region: 'us', apiKeyEnv: 'KEY1' };
  it('resolves against the file\'s folder; environment and flag values and URLs stay as given', () => {
    expect(resolveConfig({ database: 'data/x.db', apps: [app] }, {}, 'f', {}, { baseDir: '/srv/cfg' }).database).toBe('/srv/cfg/data/x.db');
    expect(resolveConfig({ apps: [app] }, {}, 'f', {}, { baseDir: '/srv/cfg' }).database).toBe('/srv/cfg/data/callsync.db');
    expect(resolveConfig({ database: '/abs/x.db', apps: [app] }, {}, 'f', {}, { baseDir: '/srv/cfg' }).database).toBe('/abs/x.db');
    expect(resolveConfig({ database: 'data/x.db', apps: [app] }, { CALLSYNC_DATABASE: 'env.db' }, 'f', {}, { baseDir: '/srv/cfg' }).database).toBe('env.db');
    expect(resolveConfig({ database: 'data/x.db', apps: [app] }, {}, 'f', { database: 'flag.db' }, { baseDir: '/srv/cfg' }).database).toBe('flag.db');
    expect(resolveConfig({ database: 'postgres://u@h/db', apps: [app] }, {}, 'f', {}, { baseDir: '/srv/cfg' }).database).toBe('postgres://u@h/db');
  });

  it('the schedule\'s export folder follows the same rule', () => {
    const dir = (input: Record<string, unknown>, env: Record<string, string> = {}): string => resolveConfig({ apps: [app], ...input }, env, 'f', {}, { baseDir: '/srv/cfg' }).schedule.exportDir;
    expect(dir({})).toBe('/srv/cfg/exports');
    expect(dir({ schedule: { exportDir: 'out/billing' } })).toBe('/srv/cfg/out/billing');
    expect(dir({ schedule: { exportDir: '/var/exports' } })).toBe('/var/exports');
    expect(dir({ schedule: { exportDir: 'out' } }, { CALLSYNC_EXPORT_DIR: 'env-out' })).toBe('env-out');
    // Without a file (settings built in code) nothing is resolved.
    expect(resolveConfig({ apps: [app] }, {}).schedule.exportDir).toBe('exports');
  });
});

describe('an unknown field named like a key', () => {
  it('is reported without printing its name', () => {
    const key = 'a3f9c2e71a6b84d05e1c2a3b4c5d6e7f8a9b0c1d';
    const message = err(() => resolveConfig({ ...base, [key]: 'x' }, {}, 'c.json'));
    expect(message).toBe('c.json: (top level): unknown field (a name that looks like an API key, not shown); remove it or fix its name (the fields are in the README)');
  });
});

describe('requestsPerMinute "unlimited": for a local simulator or a proxy, never the service', () => {
  const app = (extra: Record<string, unknown>) => ({ database: 'x.db', apps: [{ appId: 'main', region: 'us', apiKeyEnv: 'K', requestsPerMinute: 'unlimited', ...extra }] });

  it('is accepted for loopback simulators and a private proxy', () => {
    for (const host of ['http://127.0.0.1:4010', 'http://localhost:4010', 'https://cometchat-proxy.corp.example']) {
      const s = resolveConfig(app({ callsBaseUrl: `${host}/calls/v3`, chatBaseUrl: `${host}/chat/v3` }), {});
      expect(s.apps[0]!.requestsPerMinute).toBe('unlimited');
    }
  });

  it('is refused for the service\'s own hosts in one line naming the app', () => {
    const refusal = /^c\.json: apps\[0\]\.requestsPerMinute: app main talks to the service's own hosts \(\*\.cometchat\.io\), where "unlimited" .*local simulator or a proxy/;
    // Omitted base URLs are the documented hosts.
    const omitted = err(() => resolveConfig(app({}), {}, 'c.json'));
    expect(omitted).toMatch(refusal);
    expect(omitted.split('\n')).toHaveLength(1);
    // Written out, or only one of the two pointing at the service.
    const written = err(() => resolveConfig(app({ callsBaseUrl: 'https://main.call-us.cometchat.io/v3', chatBaseUrl: 'https://main.api-us.cometchat.io/v3' }), {}, 'c.json'));
    expect(written).toMatch(refusal);
    expect(written.split('\n')).toHaveLength(1);
    expect(err(() => resolveConfig(app({ callsBaseUrl: 'http://127.0.0.1:4010/v3' }), {}, 'c.json'))).toMatch(refusal);
  });

  it('is the only text value requestsPerMinute takes, said with the number range', () => {
    expect(err(() => resolveConfig(app({ requestsPerMinute: 'fast', callsBaseUrl: 'http://127.0.0.1:1/v3', chatBaseUrl: 'http://127.0.0.1:1/v3' }), {}, 'c.json'))).toBe(
      'c.json: apps[0].requestsPerMinute: expected a whole number from 1 to 100000 or "unlimited" (got "fast")',
    );
  });
});
