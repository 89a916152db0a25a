import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, TEST_KEY, testConfig, testSettings } from '../helpers/harness.js';
import { userForFileModes } from './support/cli-as.js';

/**
 * probe70: since probe68 F5 (openAtConfiguredTolerance), `export billing` and `report` apply the
 * config's reconcileToleranceMinutes in a transaction they roll back, that is, by writing. When the
 * config's tolerance is not the one the last sync stored (a finance config left at the default
 * 0.01 beside a sync's 0.5, or any config changed since the last sync), both failed, exit 2, on a
 * database they may only read: a read-only role as docs/schema.md sets up for BI tools, a standby,
 * a SQLite file or copy this user may not write. Before F5 they worked there. Only the relation
 * counts depend on the tolerance (minutes and flagged calls do not): the figures are now read at the
 * stored tolerance, and one warning line (and the report's notices) says which tolerance they are at
 * and why the configured one was not applied.
 */
const ENV = { [KEY_ENV]: TEST_KEY };
const MONTH = '2025-11';
const tmp = tempDir('probe70-tolerance-ro-');
let sim: Simulator;

beforeAll(async () => {
  sim = await startTestSim([{ appId: 'app1', calls: 1500 }]);
});
afterAll(async () => {
  await sim.close();
  tmp.cleanup();
});

type Row = Record<string, string>;
const total = (res: CliResult): Row => (parse(res.stdout, { columns: true }) as Row[]).find((r) => r.row_kind === 'total')!;
/** The columns that do not depend on the tolerance. */
const MINUTES = ['calls', 'user_minutes', 'call_total_minutes', 'flagged_calls', 'flagged_user_minutes', 'delta_minutes'] as const;
const minutes = (r: Row): Row => Object.fromEntries(MINUTES.map((k) => [k, r[k]!]));

function writeConfig(name: string, database: string, tolerance: number): string {
  const path = join(tmp.dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(testConfig(sim, ['app1'], database, { reconcileToleranceMinutes: tolerance })));
  chmodSync(path, 0o644);
  return path;
}

function expectFallbackWarning(stderr: string): void {
  const lines = stderr.trim().split('\n').filter((l) => /tolerance/.test(l));
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^callsync: warning: /);
  expect(lines[0]).toContain('5');
  expect(lines[0]).toContain('0.01');
}

describe('export billing, report and reconcile on a database this user may only read, the config tolerance not the stored one', () => {
  it('PostgreSQL, a read-only role made as docs/schema.md says: exit 0, figures at the stored tolerance, one warning', async () => {
    if (!(await testDialects()).includes('postgres')) return;
    const dbs = databaseFactory('postgres', tmp.dir);
    const role = `cs_p70_${randomBytes(4).toString('hex')}`;
    const owner = await dbs.fresh('p70_tol');
    const admin = new pg.Client({ connectionString: owner });
    await admin.connect();
    try {
      expect((await syncWith(testSettings(sim, ['app1'], owner))).ok).toBe(true);
      const dbName = new URL(owner).pathname.slice(1);
      await admin.query(`create role ${role} login; alter role ${role} set default_transaction_read_only = on;
        grant connect on database ${dbName} to ${role}; grant usage on schema public to ${role}; grant select on all tables in schema public to ${role}`);
      const readerUrl = new URL(owner);
      readerUrl.username = role;
      const atStored = await runCli(['export', 'billing', '--config', writeConfig('pg-owner', owner, 0.01), '--month', MONTH], ENV);
      expect(atStored.code, atStored.stderr).toBe(0);

      const cfg = writeConfig('pg-reader', readerUrl.toString(), 5);
      const exp = await runCli(['export', 'billing', '--config', cfg, '--month', MONTH], ENV);
      expect(exp.code, exp.stderr).toBe(0);
      expectFallbackWarning(exp.stderr);
      // At the stored tolerance: the same rows as the owner's export at 0.01.
      expect(total(exp)).toEqual(total(atStored));

      const page = join(tmp.dir, 'pg-report.html');
      const rep = await runCli(['report', '--config', cfg, '--month', MONTH, '--out', page], ENV);
      expect(rep.code, rep.stderr).toBe(0);
      expectFallbackWarning(rep.stderr);
      expect(readFileSync(page, 'utf8')).toContain('reconcileToleranceMinutes');

      // reconcile the same: the config's tolerance equal to the stored one needs no writing at all
      // (it opened a writing connection whenever a config was given, and failed here, exit 2); a
      // different one is read at the stored tolerance with the line; --tolerance, asked by name, fails.
      const same = await runCli(['reconcile', '--config', writeConfig('pg-reader-same', readerUrl.toString(), 0.01), '--format', 'csv'], ENV);
      expect(same.code, same.stderr).toBe(0);
      expect(same.stderr).not.toMatch(/tolerance/);
      const differs = await runCli(['reconcile', '--config', cfg, '--format', 'csv'], ENV);
      expect(differs.code, differs.stderr).toBe(0);
      expectFallbackWarning(differs.stderr);
      expect(differs.stdout).toBe(same.stdout);
      const named = await runCli(['reconcile', '--config', cfg, '--tolerance', '5'], ENV);
      expect(named.code).not.toBe(0);

      // A role that may only SELECT, its session read-write by default: the same.
      await admin.query(`alter role ${role} reset default_transaction_read_only`);
      const rw = await runCli(['export', 'billing', '--config', cfg, '--month', MONTH], ENV);
      expect(rw.code, rw.stderr).toBe(0);
      expectFallbackWarning(rw.stderr);
      expect(minutes(total(rw))).toEqual(minutes(total(atStored)));
    } finally {
      await admin.query(`drop owned by ${role}`).catch(() => undefined);
      await admin.end();
      await dbs.dropAll();
      const c = new pg.Client({ connectionString: process.env.CALLSYNC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test' });
      await c.connect();
      await c.query(`drop role if exists ${role}`).finally(() => c.end());
    }
  }, 180_000);

  it('SQLite, a file and folder this user may not write: exit 0, figures at the stored tolerance, one warning', async () => {
    const folder = join(tmp.dir, 'ro');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(folder);
    const db = join(folder, 'calls.db');
    expect((await syncWith(testSettings(sim, ['app1'], db))).ok).toBe(true);
    // A copy in rollback-journal mode, as a backup a reader is handed: no -shm needed to read it.
    const pragma = await runCli(['query', '--database', db, 'select 1'], ENV);
    expect(pragma.code, pragma.stderr).toBe(0);
    const SqliteDatabase = (await import('better-sqlite3')).default;
    const conn = new SqliteDatabase(db);
    conn.pragma('journal_mode = delete');
    conn.close();
    const atStored = await runCli(['export', 'billing', '--config', writeConfig('sqlite-owner', db, 0.01), '--month', MONTH], ENV);
    expect(atStored.code, atStored.stderr).toBe(0);
    const cfg = writeConfig('sqlite-reader', db, 5);
    chmodSync(db, 0o444);
    chmodSync(folder, 0o555);
    chmodSync(tmp.dir, 0o755);
    try {
      const user = userForFileModes();
      expect(user.canWrite(folder), user.label).toBe(false);
      const exp = await user.run(['export', 'billing', '--config', cfg, '--month', MONTH], ENV);
      expect(exp.code, exp.stderr).toBe(0);
      expectFallbackWarning(exp.stderr);
      expect(total(exp)).toEqual(total(atStored));
      const rep = await user.run(['report', '--config', cfg, '--month', MONTH, '--out', '-'], ENV);
      expect(rep.code, rep.stderr).toBe(0);
      expectFallbackWarning(rep.stderr);
    } finally {
      chmodSync(folder, 0o755);
      chmodSync(db, 0o644);
    }
  }, 180_000);
});
