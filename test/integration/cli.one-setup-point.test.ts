import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { migrationProvider, pendingMigrations } from '../../src/store/migrate.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { KEY_ENV, startTestSim, tempDir, TEST_KEY, testConfig, withStore } from '../helpers/harness.js';

/**
 * Every command resolves its settings one way (src/config/command-settings.ts) and every reader
 * opens the database one way (src/cli/open-for-reading.ts). These are the places where commands
 * used to disagree; each case failed before the commands shared the rule.
 */
const ENV = { [KEY_ENV]: TEST_KEY };
const hash = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
const oneLine = (stderr: string): string[] => stderr.trim().split('\n');

describe('one resolution and one read policy for every command', () => {
  let sim: Simulator;
  const tmp = tempDir('callsync-setup-point-');
  const db = join(tmp.dir, 'synced.db');
  const cfg = join(tmp.dir, 'callsync.json');
  const missing = join(tmp.dir, 'no-such-config.json');

  beforeAll(async () => {
    sim = await startTestSim([{ calls: 40 }]);
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
    const first = await runCli(['sync', '--config', cfg, '--quiet'], ENV);
    expect(first.code, first.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await sim.close();
    tmp.cleanup();
  });

  it('a --config that does not exist is refused in one line by every command, --database or not (status and runs used to ignore it)', async () => {
    for (const args of [['status', '--config', missing], ['runs', '--database', db, '--config', missing], ['reconcile', '--database', db, '--config', missing]]) {
      const r = await runCli(args, ENV, tmp.dir);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(oneLine(r.stderr)).toEqual([`callsync: config file ${missing} not found; pass --config FILE (or set CALLSYNC_CONFIG), or run \`callsync demo\` to try it without an account`]);
      expect(r.stdout).toBe('');
    }
  });

  it('no config and no --database: readers look for the default database, as status does (reconcile and runs asked for a config file)', async () => {
    for (const args of [['reconcile'], ['runs'], ['export', 'billing', '--month', '2025-11']]) {
      const r = await runCli(args, ENV, tmp.dir);
      expect(r.code, r.stderr).toBe(2);
      expect(oneLine(r.stderr)).toEqual(['callsync: database data/callsync.db does not exist; run `callsync sync` first, or pass --database']);
    }
    const status = await runCli(['status'], ENV, tmp.dir);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toBe('no database at data/callsync.db yet: never synced\n');
    // Under --format json, JSON (it was the same line of text).
    const json = await runCli(['status', '--format', 'json'], ENV, tmp.dir);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ healthy: true, apps: [], note: 'no database at data/callsync.db yet: never synced' });
  });

  it('a --database that is missing or not a database: query says what the other readers say (it said "cannot be opened read-only" and "query: file is not a database")', async () => {
    const gone = join(tmp.dir, 'gone.db');
    const text = join(tmp.dir, 'notes.txt');
    writeFileSync(text, 'these are notes, not a database; '.repeat(20));
    for (const args of [['query', 'select 1'], ['runs'], ['reconcile']]) {
      const missing = await runCli([...args, '--database', gone], ENV, tmp.dir);
      expect(missing.code, `${args.join(' ')}: ${missing.stderr}`).toBe(2);
      expect(oneLine(missing.stderr)).toEqual([`callsync: database ${gone} does not exist; run \`callsync sync\` first, or pass --database`]);
    }
    for (const args of [['query', 'select 1'], ['runs'], ['reconcile'], ['status']]) {
      const r = await runCli([...args, '--database', text], ENV, tmp.dir);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(oneLine(r.stderr)).toEqual([`callsync: database ${text} cannot be opened: it is not a SQLite database (file is not a database); check the path, or pass --database`]);
    }
    // A folder given for the file: it said "disk I/O error; check the path and that its folder is writable".
    const folder = join(tmp.dir, 'data-folder');
    mkdirSync(folder);
    for (const args of [['query', 'select 1'], ['runs'], ['status']]) {
      const r = await runCli([...args, '--database', folder], ENV, tmp.dir);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(oneLine(r.stderr)).toEqual([`callsync: database ${folder} is a folder; give the path of the database file in it (e.g. ${folder}/callsync.db)`]);
    }
    // A damaged file (its first 64 KB): it was blamed on the folder (probe round 22).
    const damaged = join(tmp.dir, 'damaged.db');
    writeFileSync(damaged, readFileSync(db).subarray(0, 65_536));
    for (const args of [['query', 'select count(*) from calls'], ['runs'], ['status']]) {
      const r = await runCli([...args, '--database', damaged], ENV, tmp.dir);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(oneLine(r.stderr)[0]).toMatch(/^callsync: database .*damaged\.db cannot be opened: the file is damaged \(SQLITE_CORRUPT[^)]*\); restore it from a backup, or move it aside and run `callsync sync` to make a new one$/);
    }
    expect(existsSync(gone)).toBe(false);
    expect(readdirSync(folder)).toEqual([]);
  });

  it('a reader leaves the SQLite file as it found it: byte-identical, nothing written beside it (a guard on the read-only open)', async () => {
    // A read-only connection to a WAL database may leave its (empty) -wal and -shm beside it.
    const files = (): string[] => readdirSync(tmp.dir).filter((f) => !/-(wal|shm)$/.test(f)).sort();
    const before = { hash: hash(db), files: files() };
    for (const args of [['runs'], ['status'], ['state', 'show'], ['export', 'billing', '--month', '2025-11'], ['reconcile'], ['report', '--month', '2025-11', '--out', '-']]) {
      const r = await runCli([...args, '--config', cfg], ENV, tmp.dir);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(hash(db), args.join(' ')).toBe(before.hash);
      expect(files(), args.join(' ')).toEqual(before.files);
      if (existsSync(`${db}-wal`)) expect(statSync(`${db}-wal`).size, args.join(' ')).toBe(0);
    }
  });

  describe('a database on an older schema', () => {
    const old = join(tmp.dir, 'old.db');
    // The migrations after it: counted, so that adding one does not change this test.
    let pending = 0;
    beforeAll(async () => {
      await withStore(old, async (s) => {
        const r = await new Migrator({ db: s.db, provider: migrationProvider(s.db) }).migrateTo('20261123T000000_listing_proof');
        expect(r.error).toBeUndefined();
        pending = (await pendingMigrations(s.db)).pending.length;
        expect(pending).toBeGreaterThanOrEqual(3);
      });
    });

    it('sync --dry-run, which writes nothing, refuses it in one line and leaves it as it was', async () => {
      const before = hash(old);
      const r = await runCli(['sync', '--dry-run', '--config', cfg, '--database', old], ENV, tmp.dir);
      expect(r.code, r.stderr).toBe(2);
      expect(oneLine(r.stderr)).toEqual([`callsync: database ${old} has an older schema (${pending} migration(s) to apply); run \`callsync migrate\` (or \`callsync sync\`) on it first`]);
      expect(hash(old)).toBe(before);
    });

    it('report brings it to the latest schema, as every other reader does (it used to refuse it)', async () => {
      const r = await runCli(['report', '--month', '2025-11', '--database', old, '--out', join(tmp.dir, 'old.html')], ENV, tmp.dir);
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(tmp.dir, 'old.html'))).toBe(true);
      const again = await runCli(['migrate', '--database', old], ENV, tmp.dir);
      expect(again.stdout).toMatch(/schema is up to date/);
    });
  });
});

const dialects = await testDialects();
describe.runIf(dialects.includes('postgres'))('the config file is read with --database too (PostgreSQL)', () => {
  const tmp = tempDir('callsync-setup-point-pg-');
  const dbs = databaseFactory('postgres', tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  it("its databasePasswordEnv applies to the database --database names (reconcile, runs, status and export ignored it)", async () => {
    const url = await dbs.fresh('pwenv');
    const cfg = join(tmp.dir, 'pg.json');
    writeFileSync(cfg, JSON.stringify({ database: 'unused.db', databasePasswordEnv: 'CALLSYNC_TEST_UNSET_PASSWORD', apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV }] }));
    for (const args of [['reconcile'], ['runs'], ['status'], ['export', 'billing', '--month', '2025-11']]) {
      const r = await runCli([...args, '--config', cfg, '--database', url], ENV, tmp.dir);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(oneLine(r.stderr), args.join(' ')).toEqual([expect.stringMatching(/^callsync: database postgres:\/\/.*: environment variable CALLSYNC_TEST_UNSET_PASSWORD \(databasePasswordEnv\) is not set; export the database password in it$/)]);
    }
  });
});
