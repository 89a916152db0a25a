import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, collect, runCli, spawnCli } from '../helpers/cli.js';
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
    expect(r.stderr.trim()).toBe('callsync: query: interrupted; the statement was stopped');
    // Nothing that reads as a whole result: the table was printed empty, "(0 rows)" (probe round 21).
    expect(r.stdout).toBe('');
    expect(alive(child)).toBe(false);
  }, 60_000);

  it.each([
    ['inside the statement', ENDLESS],
    ['while its rows wait for a slow reader', 'with recursive r(x) as (select 1 union all select x + 1 from r where x < 1000000) select x, \'row \' || x as text from r'],
  ])('Ctrl-C on a terminal (SIGINT to the whole process group) %s is an interruption too, exit 5', async (_when, statement) => {
    // It reached the query process as well, which died of it first: "the SQLite query process could
    // not run (write EPIPE)" or "… ended without an answer (SIGINT)", exit 2 (probe round 21).
    const cli = spawn(process.execPath, [CLI_MAIN, 'query', '--database', database('group'), '--format', 'csv', '--limit', '0', statement], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    const done = collect(cli);
    cli.stdout!.pause();
    await queryChild(cli.pid!);
    await new Promise((r) => setTimeout(r, 500));
    process.kill(-cli.pid!, 'SIGINT');
    cli.stdout!.resume();
    const r = await done;
    expect([r.code, r.stderr.trim().split('\n').at(-1)]).toEqual([5, 'callsync: query: interrupted; the statement was stopped']);
  }, 60_000);

  it('a query process whose parent is killed outright (SIGKILL, a closed terminal) does not run on', async () => {
    // It ran its statement to the end under init, at full CPU, with no timeout left (probe round 21).
    const cli = spawnCli(['query', '--database', database('orphan'), ENDLESS]);
    const done = collect(cli);
    const child = await queryChild(cli.pid!);
    cli.kill('SIGKILL');
    await done;
    while (alive(child)) await new Promise((r) => setTimeout(r, 100));
    expect(alive(child)).toBe(false);
  }, 60_000);

  it('the timeout is the statement\'s own time: a reader slower than it still gets every row', async () => {
    // It counted the waits for stdout: `| (sleep 5; wc -l)` got 5,001 of 1,000,001 lines under a 3 s timeout (probe round 21).
    // The clock also runs while the query process starts and while each batch crosses to this one:
    // 1 s with 200,000 (then 50,000) rows failed under the full suite on two loaded cores; 2 s
    // with 20,000 rows (~340 KB, many pipe-fulls) leaves room, and a 6 s wait is still 3 × it.
    const config = join(tmp.dir, 'slow-reader.json');
    writeFileSync(config, JSON.stringify({ database: database('slow-reader'), queryTimeoutSeconds: 2, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: 'K1' }] }));
    const cli = spawnCli(['query', '--config', config, '--format', 'csv', '--limit', '0', "with recursive r(x) as (select 1 union all select x + 1 from r where x < 20000) select x, 'row ' || x as text from r"]);
    const done = collect(cli);
    // Nothing is read for 6 s: the pipe fills and the CLI waits on it, three times the timeout.
    cli.stdout!.pause();
    await new Promise((r) => setTimeout(r, 6000));
    cli.stdout!.resume();
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\r\n');
    expect([lines.length, lines.at(-1)]).toEqual([20_001, '20000,row 20000']);
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
    // CSV holds the values whole, and a line break inside a value stays inside its field (it was
    // unquoted, 0.1235 and "<2 bytes>": probe round 21).
    const csv = await runCli(['query', '--database', db, '--format', 'csv', "select 'line1' || char(10) || 'line2' as text, 0.123456789 as real, x'00ff' as bytes"]);
    expect(csv.stdout).toBe('text,real,bytes\r\n"line1\nline2",0.123456789,AP8=\r\n');
    const write = await runCli(['query', '--database', db, 'create table t(x)']);
    expect([write.code, write.stderr.trim()]).toEqual([2, 'callsync: query is read-only: this statement would change the database, so it was not run. Use a SELECT (or WITH … SELECT).']);
    const bad = await runCli(['query', '--database', db, 'selec 1']);
    // The file has no callsync tables: a failing statement's line says so too (probe round 22).
    expect([bad.code, bad.stderr.trim()]).toEqual([2, `callsync: query: near "selec": syntax error; database ${db} has no callsync tables yet (no sync has run on it); run \`callsync sync\` first, or pass --database`]);
    // A table past 50,000 rows is refused in one line (it overflowed the stack: exit 3, no output; probe round 21).
    const long = await runCli(['query', '--database', db, '--limit', '0', 'with recursive r(x) as (select 1 union all select x + 1 from r where x < 200000) select x from r']);
    expect([long.code, long.stdout, long.stderr.trim()]).toEqual([2, '', 'callsync: --format table shows at most 50,000 rows and this result has more; use --format csv or json (no bound), or a smaller --limit']);
    const many = await runCli(['query', '--database', db, '--format', 'csv', '--limit', '2500', 'with recursive r(x) as (select 1 union all select x + 1 from r where x < 3000) select x from r']);
    expect(many.stdout.trim().split('\n')).toHaveLength(2501);
    expect(many.stderr).toContain('stopped at --limit 2500 rows');
  });
});
