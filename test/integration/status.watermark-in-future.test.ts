import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, withStore } from '../helpers/harness.js';

describe('callsync status', () => {
  it('flags a watermark in the future (exit 1, one line saying how to recompute it)', async () => {
    const tmp = tempDir('callsync-status-');
    try {
      const database = join(tmp.dir, 'future.db');
      const now = Math.floor(Date.now() / 1000);
      await withStore(database, async (s) => {
        await migrateToLatest(s.db);
        await s.db.insertInto('sync_state').values([
          { app_id: 'ahead', region: 'us', watermark_started_at: now + 7 * 86_400, last_success_at: now, last_full_sync_at: now, updated_at: now },
          { app_id: 'fine', region: 'eu', watermark_started_at: now - 3600, last_success_at: now, last_full_sync_at: now, updated_at: now },
        ]).execute();
      });
      const r = await runCli(['status', '--database', database], {}, tmp.dir);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toMatch(/^WATERMARK IN THE FUTURE: ahead \(us\) at .*; run `callsync sync --full --app ahead` to recompute it$/m);
      expect(r.stdout).not.toMatch(/FUTURE: fine/);
      const json = await runCli(['status', '--database', database, '--format', 'json'], {}, tmp.dir);
      const parsed = JSON.parse(json.stdout) as { healthy: boolean; apps: { app_id: string; watermark_in_future: boolean }[] };
      expect(parsed.healthy).toBe(false);
      expect(parsed.apps.map((a) => [a.app_id, a.watermark_in_future])).toEqual([['ahead', true], ['fine', false]]);
    } finally {
      tmp.cleanup();
    }
  });
});
