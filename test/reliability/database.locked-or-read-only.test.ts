import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { collect, runCli, spawnCli, type CliResult } from '../helpers/cli.js';
import { integrityProblems } from '../helpers/db-dump.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';
import { userForFileModes, type FileModeUser } from './support/cli-as.js';
import { storedCalls } from './support/crash.js';

/**
 * The database is not available: locked by another process, in a read-only folder, or under a path
 * that cannot be a folder. Each ends with a clear one-line error (never a stack trace, never exit 3
 * "internal error"), nothing half-written, and a later run that reaches the ground truth.
 *
 * A lock is held with a second better-sqlite3 connection (`BEGIN EXCLUSIVE`): briefly (the sync
 * must wait and succeed), or past the busy timeout (10 s, BUSY_TIMEOUT_MS), before the run or in the
 * middle of it. The three run side by side; CALLSYNC_BUSY_TIMEOUT_MS is passed for when the store
 * reads it (then HOLD_MS can shrink with it).
 */
const ENV = { [KEY_ENV]: TEST_KEY, CALLSYNC_BUSY_TIMEOUT_MS: '1500' };
/** Longer than the busy timeout (lower it with the timeout once the store reads CALLSYNC_BUSY_TIMEOUT_MS). */
const HOLD_MS = 1500 + 2_000;
/** Enough calls that the sync runs for seconds and commits several times (page-writer.ts), so the lock lands between two commits. */
const CALLS = 3000;
/**
 * The scenarios whose lock is held before the sync starts (brief, before) wait at its first write
 * whatever the number of calls: they sync a smaller simulator, so that their full syncs (brief's,
 * and before's rerun) do not list and fetch 3000 calls each.
 */
const CALLS_LOCKED_BEFORE = 300;

/** Holds an exclusive write lock on `path` until release() (a second process's writer, in effect). */
function lockDatabase(path: string): { release(): void } {
  const conn = new SqliteDatabase(path, { timeout: 5_000 });
  conn.exec('BEGIN EXCLUSIVE');
  return {
    release() {
      if (conn.inTransaction) conn.exec('ROLLBACK');
      conn.close();
    },
  };
}

function fileHash(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** One clear line: no stack trace, not reported as an internal error. */
function expectClearError(res: CliResult, pattern: RegExp): void {
  expect(res.code, res.stderr).not.toBe(0);
  expect(res.code, res.stderr).not.toBe(3);
  expect(res.stderr).not.toMatch(/unexpected error|\n\s+at /);
  expect(res.stderr).toMatch(pattern);
}

describe('a database locked by another process', () => {
  let sim: Simulator;
  let small: Simulator;
  /** The simulator a scenario syncs: `sim` (CALLS) mid-run, `small` for the locks held before the run. */
  const simFor = (name: string): Simulator => (name === 'midrun' ? sim : small);
  const tmp = tempDir('callsync-locked-');
  const setupFor = (name: string): { db: string; cfg: string } => ({ db: join(tmp.dir, `${name}.db`), cfg: join(tmp.dir, `${name}.json`) });
  /** The three scenarios run side by side in beforeAll (each mostly waits on a busy timeout). */
  const got: Partial<Record<'brief' | 'before' | 'midrun', { res: CliResult; waiting?: boolean; written?: number }>> = {};

  async function brief(): Promise<void> {
    const { db, cfg } = setupFor('brief');
    expect((await runCli(['migrate', '--config', cfg], ENV)).code).toBe(0);
    const lock = lockDatabase(db);
    // This run keeps the default 10 s busy timeout: the 4 s hold is then well short of it.
    const child = spawnCli(['sync', '--config', cfg, '--quiet'], { ...ENV, CALLSYNC_BUSY_TIMEOUT_MS: '10000' });
    const done = collect(child);
    // Long enough for the process to start and reach its first write, well short of the busy timeout.
    await delay(4_000);
    const waiting = child.exitCode === null;
    lock.release();
    got.brief = { res: await done, waiting };
  }

  async function before(): Promise<void> {
    const { db, cfg } = setupFor('before');
    expect((await runCli(['migrate', '--config', cfg], ENV)).code).toBe(0);
    const lock = lockDatabase(db);
    try {
      got.before = { res: await runCli(['sync', '--config', cfg], ENV) };
    } finally {
      lock.release();
    }
  }

  async function midRun(): Promise<void> {
    const { db, cfg } = setupFor('midrun');
    const child = spawnCli(['sync', '--config', cfg], ENV);
    const done = collect(child);
    const deadline = Date.now() + 20_000;
    while (storedCalls(db) < 50 && child.exitCode === null && Date.now() < deadline) await delay(5);
    // Held past the busy timeout, so the page being written fails; then let go, as a backup would.
    const lock = lockDatabase(db);
    const written = storedCalls(db);
    await delay(HOLD_MS);
    lock.release();
    got.midrun = { res: await done, written };
  }

  beforeAll(async () => {
    sim = await startTestSim([{ calls: CALLS }], { latencyMs: 5 });
    small = await startTestSim([{ calls: CALLS_LOCKED_BEFORE }], { latencyMs: 5 });
    for (const name of ['brief', 'before', 'midrun']) {
      const { db, cfg } = setupFor(name);
      writeFileSync(cfg, JSON.stringify(testConfig(simFor(name), ['app1'], db, { detailFetch: 'always', concurrency: 4, pageSize: 50 })));
    }
    await Promise.all([brief(), before(), midRun()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([sim?.close(), small?.close()]);
    tmp.cleanup();
  });

  async function rerunReachesTruth(name: string): Promise<void> {
    const { db, cfg } = setupFor(name);
    const again = await runCli(['sync', '--config', cfg, '--quiet'], ENV);
    expect(again.code, again.stderr).toBe(0);
    await withStore(db, async (s) => {
      expect(await integrityProblems(s.db)).toEqual([]);
      expect(await diffAgainstTruth(s.db, simFor(name).truth('app1'))).toEqual([]);
    });
  }

  it('held briefly: the sync waits for it and succeeds', async () => {
    const { waiting, res } = got.brief!;
    expect(waiting).toBe(true);
    expect(res.code, res.stderr).toBe(0);
    await withStore(setupFor('brief').db, async (s) => expect(await diffAgainstTruth(s.db, small.truth('app1'))).toEqual([]));
  });

  it('held past the busy timeout before the run: it fails, writes nothing, and the next run recovers', async () => {
    const { res } = got.before!;
    expect(res.code).not.toBe(0);
    await withStore(setupFor('before').db, async (s) => {
      expect(await s.db.selectFrom('calls').select('session_id').execute()).toEqual([]);
      expect(await s.db.selectFrom('leases').selectAll().execute()).toEqual([]);
    });
    await rerunReachesTruth('before');
  });

  // The lease write's SQLITE_BUSY reaches main() as DB_LOCKED: one line, exit 1 (EXIT_FOR_CODE).
  it('held past the busy timeout before the run: the error is one clear line', () => {
    expectClearError(got.before!.res, /locked/i);
  });

  it('held past the busy timeout mid-run: the run fails, the pages written stay whole, the watermark stays, the next run recovers', async () => {
    const { res, written } = got.midrun!;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(CALLS);
    // Exit 1 with the app's FAILED line when the page work the failed app left behind has drained
    // before the CLI closes the store; see the `.fails` test in faults.listing.test.ts.
    expect(res.code).not.toBe(0);
    expect(res.code).not.toBe(3);
    expect(res.stderr).toContain('app app1 (us): database is locked');
    await withStore(setupFor('midrun').db, async (s) => {
      expect(await integrityProblems(s.db)).toEqual([]);
      // Whole pages only: every stored call has all its participant rows.
      const partial = await s.db
        .selectFrom('calls')
        .select('session_id')
        .where((eb) => eb('participant_rows', '!=', eb.selectFrom('call_participants as p').select((e) => e.fn.countAll<number>().as('n')).whereRef('p.session_id', '=', 'calls.session_id').whereRef('p.app_id', '=', 'calls.app_id')))
        .execute();
      expect(partial).toEqual([]);
      expect(await s.db.selectFrom('sync_state').selectAll().execute()).toEqual([]);
    });
    await rerunReachesTruth('midrun');
  });
});

describe('a database folder that cannot be written', () => {
  let sim: Simulator;
  const tmp = tempDir('callsync-readonly-');
  beforeAll(async () => {
    sim = await startTestSim([{ calls: 120 }]);
  });
  afterAll(async () => {
    await sim.close();
    if (existsSync(join(tmp.dir, 'ro'))) chmodSync(join(tmp.dir, 'ro'), 0o755); // so a non-root user can remove it
    tmp.cleanup();
  });

  it('a path under a plain file (ENOTDIR): sync and migrate fail with a clear error and create nothing', async () => {
    const file = join(tmp.dir, 'plain.file');
    writeFileSync(file, 'not a folder');
    const db = join(file, 'callsync.db');
    const cfg = join(tmp.dir, 'under-file.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
    const results = await Promise.all([['sync', '--config', cfg], ['migrate', '--config', cfg]].map((args) => runCli(args, ENV)));
    for (const res of results) {
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr.trim().split('\n'), res.stderr).toHaveLength(1);
      expect(res.stderr).toMatch(/^callsync: database .*plain\.file\/callsync\.db cannot be opened \((EEXIST|ENOTDIR)[^)]*\): a part of its path is a file, not a folder; check the path$/m);
    }
    expect(readFileSync(file, 'utf8')).toBe('not a folder');
    expect(sim.stats('app1').requests).toBe(0);
  });

  describe('a folder made read-only (chmod 0555) after a sync', () => {
    const WRITER_LINE = /^callsync: database .*callsync\.db cannot be opened (for writing: this user may not write the file \(.*\); check its permissions|\(.*\); check the path and that its folder is writable)$/m;
    const SHM_LINE = /^callsync: database .*\/ro\/callsync\.db cannot be opened for reading by this user: it is in WAL mode, and SQLite must create callsync\.db-shm beside it to read it, but its folder .*\/ro is not writable; give this user write access to that folder, or read a copy of the database$/m;
    // Root ignores file modes: as root the commands run as `nobody`, or, where nobody cannot read
    // this checkout (a clone in /root or a `mktemp -d` folder), as root without CAP_DAC_OVERRIDE.
    let asUser: FileModeUser;
    const folder = join(tmp.dir, 'ro');
    const db = join(folder, 'callsync.db');
    const cfg = join(tmp.dir, 'ro.json');
    let before: { hash: string; files: string[] };
    let writable = false;
    const results = new Map<string, CliResult>();

    const commands: [string, string[], RegExp][] = [
      // Writers: as nobody the file itself (root's, 0644) is what refuses them; as root without the
      // file-mode override, the folder.
      ['sync', ['sync', '--config', cfg], WRITER_LINE],
      ['migrate', ['migrate', '--database', db], WRITER_LINE],
      // Readers: SQLite must create callsync.db-shm to read a WAL database. `query` said "query:
      // attempt to write a readonly database", blaming a SELECT for writing (probe round 21 #12).
      ['reconcile', ['reconcile', '--database', db], SHM_LINE],
      ['export billing', ['export', 'billing', '--month', '2025-11', '--database', db], SHM_LINE],
      ['query', ['query', '--database', db, 'select count(*) from calls'], SHM_LINE],
      ['report', ['report', '--month', '2025-11', '--database', db, '--out', '-'], SHM_LINE],
    ];

    beforeAll(async () => {
      mkdirSync(folder);
      writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
      const first = await runCli(['sync', '--config', cfg, '--quiet'], ENV);
      expect(first.code, first.stderr).toBe(0);
      chmodSync(tmp.dir, 0o755);
      chmodSync(cfg, 0o644);
      // Readable by the user the commands run as (a reader with read access to the file and none
      // to the folder, as a BI account might be); the sync made it 0600.
      chmodSync(db, 0o644);
      chmodSync(folder, 0o555);
      before = { hash: fileHash(db), files: readdirSync(folder).sort() };
      asUser = userForFileModes();
      // Whether 0555 stops that user (it should; some file systems ignore modes).
      writable = asUser.canWrite(folder);
      if (writable) return;
      // Every command against the read-only folder, side by side (none of them may write).
      const done = await Promise.all(commands.map(([, args]) => asUser.run(args, ENV)));
      commands.forEach(([name], i) => results.set(name, done[i]!));
    }, 60_000);

    function check(name: string, message: RegExp): void {
      const res = results.get(name)!;
      expect(res.stderr, `run as ${asUser.label}`).not.toMatch(/ERR_MODULE_NOT_FOUND/);
      expectClearError(res, message);
      expect(fileHash(db)).toBe(before.hash);
      expect(readdirSync(folder).sort()).toEqual(before.files);
    }

    for (const [name, , message] of commands) {
      it(`${name}: a clear error, the database byte-identical, no file added`, (ctx) => {
        if (writable) ctx.skip('this user can write a 0555 folder (root without another account to run as)');
        check(name, message);
      });
    }


    it('a symlink to it from a writable folder: the line names the database\'s own folder (probe round 22: SQLite\'s raw words)', async (ctx) => {
      if (writable) ctx.skip('this user can write a 0555 folder');
      const link = join(tmp.dir, 'link-to-ro.db');
      symlinkSync(db, link);
      const res = await asUser.run(['query', '--database', link, 'select 1'], ENV);
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(/^callsync: database .*link-to-ro\.db cannot be opened for reading by this user: it is in WAL mode, and SQLite must create callsync\.db-shm beside it to read it, but its folder .*\/ro is not writable; give this user write access to that folder, or read a copy of the database\n$/);
    });

    it('a -wal beside it this user may not read, in a writable folder: named, not the folder (probe round 22)', async (ctx) => {
      if (writable || asUser.label !== 'nobody') ctx.skip('needs another account than the files\' owner');
      const open = join(tmp.dir, 'open-wal');
      mkdirSync(open, { mode: 0o777 });
      chmodSync(open, 0o777);
      const copy = join(open, 'w.db');
      copyFileSync(db, copy);
      chmodSync(copy, 0o644);
      // A writer holding it open keeps its -wal and -shm beside it (made 0600 by this, their owner).
      const holder = new SqliteDatabase(copy);
      try {
        holder.pragma('journal_mode = WAL');
        holder.exec("insert into callsync_settings values ('probe', 'x')");
        chmodSync(`${copy}-wal`, 0o600);
        chmodSync(`${copy}-shm`, 0o600);
        const res = await asUser.run(['query', '--database', copy, 'select 1'], ENV);
        expect(res.code, res.stderr).toBe(2);
        expect(res.stderr).toMatch(/^callsync: database .*\/open-wal\/w\.db cannot be opened: this user may not read w\.db-wal beside it \(.*\); check that file's permissions\n$/);
      } finally {
        holder.close();
      }
    });

    it('a file this user may not read: query and the other readers say so (not that the folder must be writable)', async (ctx) => {
      if (writable || asUser.label !== 'nobody') ctx.skip('needs another account than the file\'s owner');
      chmodSync(db, 0o600);
      try {
        for (const args of [['query', '--database', db, 'select 1'], ['runs', '--database', db]]) {
          const res = await asUser.run(args, ENV);
          expect(res.code, res.stderr).toBe(2);
          expect(res.stderr).toMatch(/^callsync: database .*\/ro\/callsync\.db cannot be opened: this user may not read the file \(SQLITE_CANTOPEN unable to open database file\); check its permissions\n$/);
        }
      } finally {
        chmodSync(db, 0o644);
      }
    });

    it('the same database in a writable folder again syncs to the truth', async () => {
      chmodSync(folder, 0o755);
      const res = await runCli(['sync', '--config', cfg, '--quiet'], ENV);
      expect(res.code, res.stderr).toBe(0);
      await withStore(db, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
      expect(existsSync(db)).toBe(true);
    });
  });
});
