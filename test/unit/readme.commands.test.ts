import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { loadConfigFile } from '../../src/config/load.js';
import { REPO } from '../helpers/cli.js';

const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'callsync-readme-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Every command a user can type, with its subcommands (`export billing`, `state reset`). */
const PROGRAM = await buildProgram();

function commandPaths(): string[] {
  const paths: string[] = [];
  for (const cmd of PROGRAM.commands) {
    const subs = cmd.commands.filter((c) => c.name() !== 'help');
    if (subs.length === 0) paths.push(cmd.name());
    for (const sub of subs) paths.push(`${cmd.name()} ${sub.name()}`);
  }
  return paths;
}

describe('README documents the CLI a user has', () => {
  it('has a section with an example for every command the program registers', () => {
    const paths = commandPaths();
    expect(paths.length).toBeGreaterThan(15);
    const missing = paths.filter((p) => {
      const at = README.indexOf(`### \`callsync ${p}`);
      if (at < 0) return true;
      // The section, up to the next heading, shows the command run at least once in an example.
      const bodyStart = README.indexOf('\n', at);
      const next = README.indexOf('\n#', bodyStart);
      const body = README.slice(bodyStart, next === -1 ? undefined : next);
      return !body.includes('```') || !new RegExp(`callsync ${p}(\\s|$)`, 'm').test(body);
    });
    expect(missing).toEqual([]);
  });

  it('lists every exit code with what it means', () => {
    for (const code of Object.values(EXIT)) expect(README).toMatch(new RegExp(`^\\| \`${code}\` \\|`, 'm'));
  });

  it('its commented config example loads as it is (comments are allowed)', () => {
    const block = /## Using it with a real app[\s\S]*?```jsonc\n([\s\S]*?)```/.exec(README)?.[1];
    expect(block).toBeDefined();
    const file = join(tmp, 'callsync.config.json');
    writeFileSync(file, block!.replace(/^ {3}/gm, ''));
    const settings = loadConfigFile(file, { COMETCHAT_KEY_MAIN: 'k' });
    expect(settings.apps).toHaveLength(1);
    expect(settings.apps[0]!.apiKey).toBeDefined();
  });
});
