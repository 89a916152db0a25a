import { describe, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, TEST_KEY, withStore } from '../helpers/harness.js';

/**
 * A period under way (this month to date) is only as complete as the app's last successful sync.
 * The export judged only ended periods by it: an app whose last success was weeks old exported its
 * month to date with stale=0, the weeks since missing, nothing said. The database is aged here as
 * it would be after nights without a successful run (the sync's run row stays `ok`).
 */
describe('an app whose last successful sync is old is stale in the export of a period under way', () => {
  test.override({ simApps: [{ calls: 60 }] });

  it('40 hours old: stale=1 with a line; 2 hours old: stale=0', async ({ writeConfig, database }) => {
    const env = { [KEY_ENV]: TEST_KEY };
    const cfg = writeConfig({}, 'one.json', ['app1']);
    expect((await runCli(['sync', '--config', cfg], env)).code).toBe(0);
    const now = Math.floor(Date.now() / 1000);
    const day = (offsetDays: number): string => new Date((now + offsetDays * 86_400) * 1000).toISOString().slice(0, 10);
    const exportNow = async (): Promise<{ stale: number[]; stderr: string }> => {
      const r = await runCli(['export', 'billing', '--config', cfg, '--from', day(-10), '--to', day(2), '--format', 'json'], env);
      expect(r.code, r.stderr).toBe(0);
      return { stale: (JSON.parse(r.stdout) as { stale: number }[]).map((x) => x.stale), stderr: r.stderr };
    };
    const lastSuccess = (at: number): Promise<unknown> => withStore(database, (s) => s.db.updateTable('sync_state').set({ last_success_at: at }).execute());

    await lastSuccess(now - 40 * 3600);
    const old = await exportNow();
    expect(old.stale.length).toBeGreaterThan(0);
    expect(old.stale.every((x) => x === 1)).toBe(true);
    expect(old.stderr).toMatch(/^callsync: warning: app1 \(us\) is stale, its rows are marked stale=1: its last successful sync \(.+\) is more than 36 hours old: the period's calls since are not in the database$/m);

    await lastSuccess(now - 2 * 3600);
    const fresh = await exportNow();
    expect(fresh.stale.every((x) => x === 0)).toBe(true);
    expect(fresh.stderr).not.toMatch(/is stale/);
  }, 60_000);
});
