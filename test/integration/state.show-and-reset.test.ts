import { describe, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { runCliOnTerminal } from '../helpers/terminal.js';
import { KEY_ENV, TEST_KEY, withStore } from '../helpers/harness.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { systemClock } from '../../src/config/clock.js';
import { appLockKey, withAdvisoryLock } from '../../src/store/app-lock.js';
import { acquireLease } from '../../src/sync/lease.js';
import { SYNC_LEASE } from '../../src/sync/run-sync.js';

const dialects = await testDialects();

interface ShownApp {
  app_id: string;
  region: string;
  state: { watermark_started_at: number | null; last_full_sync_at: number | null } | undefined;
  runs: { mode: string; status: string }[];
  retries: unknown[];
  retryCount: number;
}

describe.each(dialects)('state show and state reset [%s]', (dialect) => {
  test.override({ dialect, simApps: [{ appId: 'app1', calls: 250 }, { appId: 'app2', calls: 60 }] });
  let cfg: string;
  const env = { [KEY_ENV]: TEST_KEY };
  const show = async (...extra: string[]): Promise<ShownApp[]> => {
    const res = await runCli(['state', 'show', '--config', cfg, '--format', 'json', ...extra]);
    expect(res.code, res.stderr).toBe(0);
    return (JSON.parse(res.stdout) as { apps: ShownApp[] }).apps;
  };
  test.beforeEach(({ writeConfig }) => {
    cfg = writeConfig({ pageSize: 50 }, 'state.json');
  });

  it('shows the watermark, last runs and retry list; reset makes the next sync full, ending at the ground truth', async ({ sim, database: db, dir }) => {
    expect((await runCli(['sync', '--config', cfg, '--quiet'], env)).code).toBe(0);
    expect((await runCli(['sync', '--config', cfg, '--quiet'], env)).code).toBe(0);
    const [app1, app2] = await show();
    expect(app1!.app_id).toBe('app1');
    expect(app1!.state!.watermark_started_at).toEqual(expect.any(Number));
    expect(app1!.runs.map((r) => r.mode)).toEqual(['incremental', 'full']);
    expect(app1!.retryCount).toBe(app1!.retries.length);
    expect(app2!.state!.watermark_started_at).toEqual(expect.any(Number));
    const table = await runCli(['state', 'show', '--config', cfg, '--app', 'app1']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^app1 \(us\)\n {2}watermark: {8}\d{4}-\d\d-\d\dT/);
    expect(table.stdout).toContain('retry list:');
    expect(table.stdout).not.toContain('app2');

    // Off a terminal, without --yes: refused, nothing changed.
    const unconfirmed = await runCli(['state', 'reset', '--config', cfg, '--app', 'app1']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr.trim()).toBe('callsync: state reset: not on a terminal, so nothing can be confirmed; add --yes to reset the watermark of app1 (us)');
    expect((await show('--app', 'app1'))[0]!.state!.watermark_started_at).toBe(app1!.state!.watermark_started_at);
    const unknown = await runCli(['state', 'reset', '--config', cfg, '--app', 'app3', '--yes']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--app app3: not in .*state\.json; configured apps: app1, app2/);

    // On a terminal it asks; anything but yes resets nothing.
    const declined = await runCliOnTerminal(['state', 'reset', '--config', cfg, '--app', 'app1'], 'n\n', dir);
    expect(declined.code, declined.out).toBe(2);
    expect(declined.out).toContain('Reset the watermark of app1 (us)? Its next sync lists every call again');
    expect(declined.out).toContain('callsync: nothing reset');
    expect((await show('--app', 'app1'))[0]!.state!.watermark_started_at).toBe(app1!.state!.watermark_started_at);

    const reset = await runCli(['state', 'reset', '--config', cfg, '--app', 'app1', '--yes']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/^app1 \(us\): watermark \d{4}-.* cleared; its next sync is full\n$/);
    const [after1, after2] = await show();
    expect(after1!.state!.watermark_started_at).toBeNull();
    expect(after2!.state!.watermark_started_at).toBe(app2!.state!.watermark_started_at);

    // New calls meanwhile; the next sync lists app1 whole again (mode full) and app2 incrementally.
    sim.advance('app1', { newCalls: 10, endOngoing: true });
    sim.resetStats();
    const sync = await runCli(['sync', '--config', cfg, '--quiet'], env);
    expect(sync.code, sync.stderr).toBe(0);
    const [final1, final2] = await show();
    expect(final1!.runs[0]).toMatchObject({ mode: 'full', status: 'ok' });
    expect(final2!.runs[0]).toMatchObject({ mode: 'incremental', status: 'ok' });
    expect(final1!.state!.watermark_started_at).toEqual(expect.any(Number));
    expect(sim.stats('app1').list).toBeGreaterThanOrEqual(Math.ceil(260 / 50));
    await withStore(db, async (s) => {
      expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]);
      expect(await diffAgainstTruth(s.db, sim.truth('app2'))).toEqual([]);
    });
  }, 300_000);

  it('refuses to reset while a sync holds the app (its watermark would undo the reset), and resets once it is free', async ({ database: db }) => {
    expect((await runCli(['sync', '--config', cfg, '--quiet'], env)).code).toBe(0);
    const before = (await show('--app', 'app1'))[0]!.state!.watermark_started_at;
    expect(before).toEqual(expect.any(Number));
    const reset = (): ReturnType<typeof runCli> => runCli(['state', 'reset', '--config', cfg, '--app', 'app1', '--yes']);
    // Held as a sync holds it: the database's sync lease on SQLite, the app's advisory lock on PostgreSQL.
    const refused = await withStore(db, async (s) => {
      if (dialect === 'postgres') {
        const held = await withAdvisoryLock(s.db, appLockKey('app1', 'us'), reset);
        expect(held.locked).toBe(true);
        return held.locked ? held.value : undefined;
      }
      const got = await acquireLease(s.db, SYNC_LEASE, systemClock);
      expect(got.acquired).toBe(true);
      try {
        return await reset();
      } finally {
        if (got.acquired) await got.lease.release();
      }
    });
    expect(refused!.code, refused!.stderr).toBe(EXIT.SKIPPED);
    expect(refused!.stdout).toBe('');
    expect(refused!.stderr.trim()).toMatch(
      dialect === 'postgres'
        ? /^callsync: state reset: nothing reset, a sync is running: app1 \(us\): another callsync process is syncing it now; run it again when that sync has ended$/
        : new RegExp(`^callsync: state reset: nothing reset, a sync is running: another callsync is syncing this database: process ${process.pid} on .+; run it again when that sync has ended$`),
    );
    expect((await show('--app', 'app1'))[0]!.state!.watermark_started_at).toBe(before);

    const freed = await reset();
    expect(freed.code, freed.stderr).toBe(0);
    expect((await show('--app', 'app1'))[0]!.state!.watermark_started_at).toBeNull();
    // The reset took the lock only while it ran: a sync can take it at once.
    expect((await runCli(['sync', '--config', cfg, '--quiet'], env)).code).toBe(0);
    expect((await show('--app', 'app1'))[0]!.runs[0]).toMatchObject({ mode: 'full', status: 'ok' });
  }, 300_000);
});
