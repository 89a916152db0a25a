import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';

/**
 * `apiKeyEnv` holds the NAME of the variable with the key. A key typed there instead (a CometChat
 * REST key is 40 hex characters, which is also a valid variable name) used to be printed by
 * `config check` ("environment variable <key> is not set"), logged, and stored in sync_runs.error.
 * Now it is refused before anything runs, with one line naming the field and not the value; no
 * stdout, stderr, log line or database byte holds the value or a piece of it.
 */

// Starting with a letter: a key starting with a digit already fails the name pattern.
const HEX_KEY = 'a3f9c2e71a6b84d05e1c2a3b4c5d6e7f8a9b0c1d';
const PREFIXED_KEY = 'csk_RECOGNISABLE_9f3c2e71a6b84d05';

/** Every 6-character piece of `value` found in `text`. */
function piecesIn(text: string, value: string): string[] {
  const found = new Set<string>();
  for (let i = 0; i + 6 <= value.length; i++) if (text.includes(value.slice(i, i + 6))) found.add(value.slice(i, i + 6));
  return [...found];
}

describe('a key typed into apiKeyEnv is refused and never shown', () => {
  const tmp = tempDir('callsync-apikeyenv-');
  afterAll(() => tmp.cleanup());

  function configWith(name: string, apiKeyEnv: string): { cfg: string; db: string } {
    const cfg = join(tmp.dir, `${name}.json`);
    const db = join(tmp.dir, `${name}.db`);
    writeFileSync(cfg, JSON.stringify({ database: db, apps: [{ appId: 'app1', region: 'us', apiKeyEnv, callsBaseUrl: 'http://127.0.0.1:9/v3', chatBaseUrl: 'http://127.0.0.1:9/v3' }] }));
    return { cfg, db };
  }

  it.each([
    ['a 40-hex REST key', HEX_KEY],
    ['a key with a prefix and underscores', PREFIXED_KEY],
  ])('%s: config check and sync exit 2 with one line naming the field, the value nowhere', async (name, key) => {
    const { cfg, db } = configWith(name.replace(/\W+/g, '-'), key);
    // The key is also in the environment under its own value as a name: nothing may be read from it.
    const env = { CALLSYNC_LOG_LEVEL: 'trace', [key]: 'x' };
    const runs: CliResult[] = [await runCli(['config', 'check', '--config', cfg], env), await runCli(['sync', '--config', cfg], env)];
    for (const res of runs) {
      expect(res.code).toBe(2);
      const lines = res.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/apps\[0\]\.apiKeyEnv: looks like an API key, not the NAME of an environment variable/);
      expect(piecesIn(res.stdout + res.stderr, key)).toEqual([]);
    }
    for (const f of [db, `${db}-wal`]) if (existsSync(f)) expect(piecesIn(readFileSync(f).toString('latin1'), key)).toEqual([]);
  }, 60_000);

  it('a key pasted unquoted breaks the JSON: the parse error shows where, not the text around it', async () => {
    const cfg = join(tmp.dir, 'broken.json');
    writeFileSync(cfg, `{ "apps": [ { "appId": "app1", "region": "us", "apiKeyEnv": ${HEX_KEY} } ] }`);
    const res = await runCli(['config', 'check', '--config', cfg]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('not valid JSON');
    expect(piecesIn(res.stdout + res.stderr, HEX_KEY)).toEqual([]);
  }, 60_000);
});
