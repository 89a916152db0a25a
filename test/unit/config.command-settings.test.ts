import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE, resolveCommandSettings } from '../../src/config/command-settings.js';
import { ConfigError } from '../../src/config/errors.js';
import { tempDir } from '../helpers/harness.js';

/**
 * The one resolution every command goes through (src/config/command-settings.ts): config path
 * --config > CALLSYNC_CONFIG > callsync.config.json; the file read whenever it exists; database
 * --database > CALLSYNC_DATABASE > the file's (relative to its folder) > the default.
 */
const tmp = tempDir('callsync-command-settings-');
afterAll(() => tmp.cleanup());

const app = { appId: 'app1', region: 'us', apiKeyEnv: 'KEY1' };
function writeConfig(name: string, body: Record<string, unknown>): string {
  const path = join(tmp.dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, JSON.stringify({ apps: [app], ...body }));
  return path;
}
const missing = join(tmp.dir, 'absent', 'callsync.config.json');

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('resolveCommandSettings: flags > environment > file > defaults', () => {
  const cfg = writeConfig('sub/file.json', { database: 'file.db', databasePasswordEnv: 'PW', reconcileToleranceMinutes: 0.5 });

  it('takes the database from the flag, else the environment, else the file (relative to its folder), else the default', () => {
    const env = { CALLSYNC_DATABASE: 'env.db' };
    expect(resolveCommandSettings({ config: cfg, database: 'flag.db' }, env).database).toBe('flag.db');
    expect(resolveCommandSettings({ config: cfg }, env).database).toBe('env.db');
    expect(resolveCommandSettings({ config: cfg }, {}).database).toBe(join(tmp.dir, 'sub', 'file.db'));
    // No file: the same order, ending at the default (relative to the current folder).
    expect(resolveCommandSettings({ database: 'flag.db' }, { CALLSYNC_CONFIG: missing, CALLSYNC_DATABASE: 'env.db' }).database).toBe('flag.db');
    expect(resolveCommandSettings({}, { CALLSYNC_CONFIG: missing, CALLSYNC_DATABASE: 'env.db' }).database).toBe('env.db');
    expect(resolveCommandSettings({}, { CALLSYNC_CONFIG: missing }).database).toBe(DEFAULT_DATABASE);
    expect(DEFAULT_DATABASE).toBe('data/callsync.db');
  });

  it('a file database given as a relative default also follows the file, an absolute one stays', () => {
    const noDb = writeConfig('other/nodb.json', {});
    expect(resolveCommandSettings({ config: noDb }, {}).database).toBe(resolve(tmp.dir, 'other', 'data/callsync.db'));
    const abs = writeConfig('abs.json', { database: '/var/lib/callsync/x.db' });
    expect(resolveCommandSettings({ config: abs }, {}).database).toBe('/var/lib/callsync/x.db');
  });

  it('reads the file whenever it exists, even when --database names the database: its databasePasswordEnv and settings apply', () => {
    const r = resolveCommandSettings({ config: cfg, database: 'postgres://u@h/db' }, {});
    expect(r).toMatchObject({ configPath: cfg, configRead: true, database: 'postgres://u@h/db', databasePasswordEnv: 'PW' });
    expect(r.settings?.reconcileToleranceMinutes).toBe(0.5);
    expect(resolveCommandSettings({ config: cfg }, { CALLSYNC_DATABASE: 'postgres://u@h/db' }).databasePasswordEnv).toBe('PW');
  });

  it('finds the file by --config, else CALLSYNC_CONFIG, else callsync.config.json', () => {
    const other = writeConfig('env.json', { database: 'from-env-config.db' });
    expect(resolveCommandSettings({ config: cfg }, { CALLSYNC_CONFIG: other }).configPath).toBe(cfg);
    expect(resolveCommandSettings({}, { CALLSYNC_CONFIG: other })).toMatchObject({ configPath: other, configRead: true, database: join(tmp.dir, 'from-env-config.db') });
    expect(resolveCommandSettings({}, {}).configPath).toBe('callsync.config.json');
  });

  it('without a file: the defaults, nothing from a file', () => {
    const r = resolveCommandSettings({}, { CALLSYNC_CONFIG: missing, CALLSYNC_BUSY_TIMEOUT_MS: '1500' });
    expect(r).toMatchObject({ configPath: missing, configRead: false, settings: undefined, databasePasswordEnv: undefined, busyTimeoutMs: 1500 });
  });

  it('refuses a --config that does not exist in one line, instead of falling back to the defaults', () => {
    const message = configError(() => resolveCommandSettings({ config: missing, database: 'x.db' }, {}));
    expect(message).toBe(`config file ${missing} not found; pass --config FILE (or set CALLSYNC_CONFIG), or run \`callsync demo\` to try it without an account`);
  });

  it('refuses a missing file for a command that needs its apps, wherever the path came from', () => {
    expect(configError(() => resolveCommandSettings({}, { CALLSYNC_CONFIG: missing }, { requireFile: true }))).toMatch(/^config file .* not found; /);
    expect(resolveCommandSettings({ config: cfg }, {}, { requireFile: true }).settings?.apps).toHaveLength(1);
  });

  it('a command that creates the database takes no default: something must name it', () => {
    expect(configError(() => resolveCommandSettings({}, { CALLSYNC_CONFIG: missing }, { requireNamedDatabase: true }))).toMatch(/^config file .* not found; /);
    expect(resolveCommandSettings({ database: 'x.db' }, { CALLSYNC_CONFIG: missing }, { requireNamedDatabase: true }).database).toBe('x.db');
    expect(resolveCommandSettings({}, { CALLSYNC_CONFIG: missing, CALLSYNC_DATABASE: 'e.db' }, { requireNamedDatabase: true }).database).toBe('e.db');
  });

  it('an invalid file is refused even when --database is given (every problem at once)', () => {
    const bad = writeConfig('bad.json', { concurrency: 0 });
    expect(configError(() => resolveCommandSettings({ config: bad, database: 'x.db' }, {}))).toMatch(/bad\.json: concurrency: /);
  });

  it('--log-level beats CALLSYNC_LOG_LEVEL, which beats the file', () => {
    const lv = writeConfig('lv.json', { logLevel: 'error' });
    expect(resolveCommandSettings({ config: lv }, {}).settings?.logLevel).toBe('error');
    expect(resolveCommandSettings({ config: lv }, { CALLSYNC_LOG_LEVEL: 'info' }).settings?.logLevel).toBe('info');
    expect(resolveCommandSettings({ config: lv, logLevel: 'debug' }, { CALLSYNC_LOG_LEVEL: 'info' }).settings?.logLevel).toBe('debug');
  });
});
