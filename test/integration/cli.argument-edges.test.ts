import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';

/** Arguments and files a user gets slightly wrong, or right in an unusual way (probe round 17 b). */
const tmp = tempDir('callsync-arg-edges-');
afterAll(() => tmp.cleanup());

describe('argument and file edges', () => {
  it('a config file saved with a byte order mark (Windows Notepad) loads', async () => {
    const file = join(tmp.dir, 'bom.json');
    writeFileSync(file, `\uFEFF${JSON.stringify({ database: join(tmp.dir, 'x.db'), apps: [{ appId: 'app1', region: 'us', apiKeyEnv: 'K1' }] })}`);
    const res = await runCli(['config', 'check', '--config', file], { K1: 'a-key' });
    expect(res.code, res.stderr).toBe(0);
  });

  it('reconcile --to before --from: one line, exit 2 (it passed --fail-on-mismatch on an empty range)', async () => {
    const res = await runCli(['reconcile', '--database', join(tmp.dir, 'none.db'), '--from', '2025-11-27', '--to', '2025-11-26', '--fail-on-mismatch']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('callsync: --to must be after --from (--to is exclusive)');
  });

  it('a period before 1970: one line, exit 2', async () => {
    const res = await runCli(['export', 'billing', '--database', join(tmp.dir, 'none.db'), '--month', '0000-01']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('callsync: --month "0000-01": no call is older than 1970 (unix time); check the year');
  });

  it('a key given twice in one object of the config: one line naming it and its line, exit 2 (the last won silently)', async () => {
    const file = join(tmp.dir, 'twice.json');
    writeFileSync(file, `{"database": "a.db",\n "apps": [{"appId": "app1", "region": "us", "apiKeyEnv": "K1", "appId": "app2"}],\n "database": "b.db"}`);
    const res = await runCli(['config', 'check', '--config', file], { K1: 'a-key' });
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe(`callsync: ${file}: "apps[0].appId" is given twice (line 2); JSON takes the last silently, so keep one`);
  });

  it('a mistyped option or command: one line naming it and the help to read, exit 2 (commander printed two)', async () => {
    const cases: [string[], string][] = [
      [['sync', '--bogus'], "callsync: unknown option '--bogus'; see `callsync sync --help`"],
      [['synk'], "callsync: unknown command 'synk' (Did you mean sync?); see `callsync --help`"],
      // The help of the command that has the option (`callsync export --help` does not list --month).
      [['export', 'billing', '--month'], "callsync: option '--month <YYYY-MM>' argument missing; see `callsync export billing --help`"],
    ];
    for (const [args, line] of cases) {
      const res = await runCli(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr.trim()).toBe(line);
    }
    // Help still prints in full, exit 0.
    const help = await runCli(['sync', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: callsync sync');
    // A command group without its subcommand prints its help, exit 2, and no line after it (it said
    // "callsync: (outputHelp); see …", probe round 21).
    for (const args of [[], ['export'], ['help', 'nosuch']]) {
      const group = await runCli(args);
      expect(group.code, args.join(' ')).toBe(2);
      expect(group.stderr).toContain('Usage: callsync');
      expect(group.stderr).not.toContain('(outputHelp)');
    }
  });

  it('a postgres:// URL that does not parse: one line, exit 2, the password not shown (it was exit 3 with a stack trace)', async () => {
    for (const args of [['query', 'select 1'], ['runs'], ['status'], ['reconcile']]) {
      const res = await runCli([...args, '--database', 'postgres://u:s3cret-pw@[::1:5432/db']);
      expect(res.code, args[0]).toBe(2);
      expect(res.stderr.trim()).toBe('callsync: database: not a valid postgres:// URL; write it as postgres://user@host:5432/database');
      expect(res.stdout + res.stderr).not.toContain('s3cret-pw');
    }
  });
});
