import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, runCli, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';

/**
 * `callsync query` on SQLite: a statement runs inside SQLite's C code, which nothing in the process
 * can interrupt. Ctrl-C waited for it to end (hours for the statement below) and then exited 130
 * without a word; `queryTimeoutSeconds` did not apply. The statement now runs in a child process
 * that Ctrl-C and the timeout stop. Neither test measures time: were the statement not stopped,
 * it would outlast the test's timeout.
 */
const tmp = tempDir('callsync-query-stop-');
afterAll(() => tmp.cleanup());

/** Counts to 10^12, one row at a time: hours. */
const ENDLESS = 'with recursive r(x) as (select 1 union all select x + 1 from r where x < 1000000000000) select count(*) as n from r';

function database(name: string): string {
  const file = join(tmp.dir, `${name}.db`);
  writeFileSync(file, ''); // an empty file is an empty SQLite database
  return file;
}

/** The query process the CLI started, once there is one. */
async function queryChild(pid: number): Promise<number> {
  for (;;) {
    try {
      const out = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).trim();
      if (out) return Number(out.split('\n')[0]);
    } catch {
      // pgrep exits 1 while there is none yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('query on SQLite can be stopped', () => {
  it('Ctrl-C stops a running statement: one line, exit 5, and its process is gone', async () => {
    const cli = spawnCli(['query', '--database', database('ctrl-c'), ENDLESS]);
    const done = collect(cli);
    const child = await queryChild(cli.pid!);
    cli.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(5);
    expect(r.stderr.trim().split('\n').at(-1)).toBe('callsync: query: interrupted; the statement was stopped');
    expect(alive(child)).toBe(false);
  }, 60_000);

  it('queryTimeoutSeconds stops it: one line naming the setting, exit 2', async () => {
    const config = join(tmp.dir, 'timeout.json');
    writeFileSync(config, JSON.stringify({ database: database('timeout'), queryTimeoutSeconds: 1, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: 'K1' }] }));
    const r = await runCli(['query', '--config', config, ENDLESS]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('callsync: query: stopped after 1 s (queryTimeoutSeconds); narrow the query, or raise queryTimeoutSeconds in the config');
  }, 60_000);

  it('a statement that ends answers as before, refusals and errors included', async () => {
    const db = database('answers');
    const ok = await runCli(['query', '--database', db, '--format', 'json', "select 1 as one, x'00ff' as bytes, 'é' as text"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([{ one: 1, bytes: 'AP8=', text: 'é' }]);
    const write = await runCli(['query', '--database', db, 'create table t(x)']);
    expect([write.code, write.stderr.trim()]).toEqual([2, 'callsync: query is read-only: this statement would change the database, so it was not run. Use a SELECT (or WITH … SELECT).']);
    const bad = await runCli(['query', '--database', db, 'selec 1']);
    expect([bad.code, bad.stderr.trim()]).toEqual([2, 'callsync: query: near "selec": syntax error']);
    const many = await runCli(['query', '--database', db, '--format', 'csv', '--limit', '2500', 'with recursive r(x) as (select 1 union all select x + 1 from r where x < 3000) select x from r']);
    expect(many.stdout.trim().split('\n')).toHaveLength(2501);
    expect(many.stderr).toContain('stopped at --limit 2500 rows');
  });
});
