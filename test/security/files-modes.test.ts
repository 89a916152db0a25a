import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, TEST_KEY, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from '../reliability/support/fake-calls-service.js';

/**
 * Issue 13, point 10: the database (and its -wal/-shm), exports and reports hold billing figures
 * and user ids. Made by the real CLI, they must be owner-only: no group or other access, whatever
 * the umask (which may only narrow them further). Folders the CLI creates are owner-only too.
 */
const NOW = Math.floor(Date.now() / 1000);
const DAY = 86_400;
const day = (t: number): string => new Date(t * 1000).toISOString().slice(0, 10);
const PERIOD = ['--from', day(NOW - 8 * DAY), '--to', day(NOW + 2 * DAY)];
const ENV = { [KEY_ENV]: TEST_KEY };

const mode = (path: string): number => statSync(path).mode & 0o777;
/** Owner may read and write; group and others get nothing. */
function expectOwnerOnlyFile(path: string): void {
  expect([path, (mode(path) & 0o077).toString(8), (mode(path) & 0o600).toString(8)]).toEqual([path, '0', '600']);
}
function expectOwnerOnlyDir(path: string): void {
  expect([path, (mode(path) & 0o077).toString(8), (mode(path) & 0o700).toString(8)]).toEqual([path, '0', '700']);
}

describe('files the CLI creates are owner-only', () => {
  const tmp = tempDir();
  let fake: FakeCallsService;
  const config = (database: string): string => {
    const path = join(tmp.dir, `config-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...fake.baseUrls('app1') }], requestTimeoutMs: 2_000, liveMaxDays: 3650 }));
    return path;
  };

  beforeAll(async () => {
    fake = await FakeCallsService.start({ calls: 20, ongoing: 0, spanHours: 72 });
  });
  afterAll(async () => {
    await fake.close();
    tmp.cleanup();
  });

  it('sync creates the database 0600 in new folders made 0700; export and report files are 0600', async () => {
    const db = join(tmp.dir, 'private', 'data', 'calls.db');
    const sync = await runCli(['sync', '--config', config(db)], ENV);
    expect([sync.code, sync.stderr]).toEqual([0, '']);
    expectOwnerOnlyDir(join(tmp.dir, 'private'));
    expectOwnerOnlyDir(join(tmp.dir, 'private', 'data'));
    expectOwnerOnlyFile(db);

    const csv = join(tmp.dir, 'billing.csv');
    const exp = await runCli(['export', 'billing', '--database', db, ...PERIOD, '--out', csv]);
    expect([exp.code, exp.stderr]).toEqual([0, '']);
    expectOwnerOnlyFile(csv);
    // Over an existing file the new one keeps owner-only rights (it replaces, not rewrites, it).
    writeFileSync(csv, 'old');
    chmodSync(csv, 0o644);
    const again = await runCli(['export', 'billing', '--database', db, ...PERIOD, '--format', 'json', '--out', csv]);
    expect(again.code).toBe(0);
    expectOwnerOnlyFile(csv);

    const html = join(tmp.dir, 'reports', 'monthly', 'report.html');
    const rep = await runCli(['report', '--database', db, ...PERIOD, '--out', html]);
    expect([rep.code, rep.stderr]).toEqual([0, '']);
    expectOwnerOnlyDir(join(tmp.dir, 'reports'));
    expectOwnerOnlyDir(join(tmp.dir, 'reports', 'monthly'));
    expectOwnerOnlyFile(html);
  });

  it('a database left world-readable (with its -wal and -shm) by an older version is made owner-only by the next sync', async () => {
    const dir = join(tmp.dir, 'old');
    mkdirSync(dir);
    const db = join(dir, 'calls.db');
    expect((await runCli(['sync', '--config', config(db)], ENV)).code).toBe(0);
    // Another reader keeps the database open, so its -wal and -shm outlive the next run.
    const reader = new Database(db, { readonly: true });
    try {
      reader.prepare('select count(*) from calls').get();
      const files = [db, `${db}-wal`, `${db}-shm`];
      for (const f of files) {
        expect(existsSync(f)).toBe(true);
        chmodSync(f, 0o644);
      }
      const next = await runCli(['sync', '--config', config(db)], ENV);
      expect([next.code, next.stderr]).toEqual([0, '']);
      for (const f of files) expectOwnerOnlyFile(f);
    } finally {
      reader.close();
    }
  });
});
