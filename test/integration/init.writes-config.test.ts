import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';
import { runCliOnTerminal } from '../helpers/terminal.js';

describe('callsync init', () => {
  const tmp = tempDir('callsync-init-');
  afterAll(() => tmp.cleanup());

  it('off a terminal writes a commented config from the flags that loads, and config check names the unset key variable', async () => {
    const res = await runCli(['init', '--config', 'callsync.config.json', '--app-id', 'abc123def', '--region', 'eu', '--key-env', 'COMETCHAT_KEY_MAIN'], {}, tmp.dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('wrote callsync.config.json');
    expect(res.stdout).toContain('export COMETCHAT_KEY_MAIN=');
    const path = join(tmp.dir, 'callsync.config.json');
    const text = readFileSync(path, 'utf8');
    expect(text).toMatch(/^\s*\/\/ /m);
    const s = loadConfigFile(path, {});
    expect(s.apps).toHaveLength(1);
    expect(s.apps[0]).toMatchObject({ appId: 'abc123def', region: 'eu', apiKeyEnv: 'COMETCHAT_KEY_MAIN', callsBaseUrl: 'https://abc123def.call-eu.cometchat.io/v3' });
    expect(s.database).toBe(join(tmp.dir, 'data', 'callsync.db'));
    const check = await runCli(['config', 'check'], {}, tmp.dir);
    expect(check.code).toBe(1);
    expect(check.stderr.trim()).toBe('callsync: app abc123def (eu): environment variable COMETCHAT_KEY_MAIN is not set; export the app\'s REST API key in it');
    const withKey = await runCli(['config', 'check'], { COMETCHAT_KEY_MAIN: 'k' }, tmp.dir);
    expect(withKey.code, withKey.stderr).toBe(0);
  }, 120_000);

  it('refuses to overwrite an existing file: one line, exit 2, file unchanged', async () => {
    const path = join(tmp.dir, 'mine.json');
    writeFileSync(path, '{"apps": []}');
    const res = await runCli(['init', '--config', path, '--app-id', 'x1'], {}, tmp.dir);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe(`callsync: ${path} already exists; not overwritten. Edit it, or pass --config NEW_FILE to write another`);
    expect(readFileSync(path, 'utf8')).toBe('{"apps": []}');
  }, 120_000);

  it('without flags off a terminal asks nothing and leaves placeholders that config check names', async () => {
    const res = await runCli(['init', '--config', 'placeholders.jsonc'], {}, tmp.dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('fill in "appId" and "region"');
    const check = await runCli(['config', 'check', '--config', 'placeholders.jsonc'], {}, tmp.dir);
    expect(check.code).toBe(2);
    expect(check.stderr.trim().split('\n')).toEqual([
      'callsync: placeholders.jsonc: apps[0].appId: must be the App ID from the dashboard (letters, digits, - and _)',
      'callsync: placeholders.jsonc: apps[0].region: must be one of us, eu, in (got "<us, eu or in>")',
    ]);
  }, 120_000);

  it('refuses a bad flag without writing, and never echoes a key given as --key-env', async () => {
    const key = 'a3f9c2e71a6b84d05e1c2a3b4c5d6e7f8a9b0c1d';
    const res = await runCli(['init', '--config', 'k.json', '--key-env', key], {}, tmp.dir);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('callsync: --key-env: expected the NAME of an environment variable, not the key itself');
    expect(res.stdout + res.stderr).not.toContain(key.slice(0, 12));
    expect(existsSync(join(tmp.dir, 'k.json'))).toBe(false);
    const region = await runCli(['init', '--config', 'r.json', '--region', 'uk'], {}, tmp.dir);
    expect([region.code, region.stderr.trim()]).toEqual([2, 'callsync: --region: expected one of us, eu, in']);
  }, 120_000);

  it('on a terminal prompts for the App ID, region and key variable, asking again after a bad answer', async () => {
    const res = await runCliOnTerminal(['init', '--config', 'tty.json'], 'tty-app\nuk\neu\nMY_KEY_VAR\n', tmp.dir);
    expect(res.code, res.out).toBe(0);
    expect(res.out).toContain('App ID');
    expect(res.out).toContain('expected one of us, eu, in');
    const s = loadConfigFile(join(tmp.dir, 'tty.json'), {});
    expect(s.apps[0]).toMatchObject({ appId: 'tty-app', region: 'eu', apiKeyEnv: 'MY_KEY_VAR' });
  }, 120_000);
});
