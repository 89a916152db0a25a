import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Agent } from 'undici';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { systemClock, type Clock } from '../../src/config/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { printFollowUp } from '../../src/cli/commands/schedule-workers.js';
import { runScheduledTick } from '../../src/schedule/scheduled-tick.js';
import { openStore } from '../../src/store/connection.js';
import { tempDir } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * probe68 F4: a call with participant minutes but no start time is in no period's figures, so
 * `export billing` and `report` of the period it was initiated in say so (warning lines naming the
 * calls, their user-minutes and the query that lists them; probe round 16 a, F1). The nightly
 * tick's monthly export, the billing file finance is sent, wrote the same figures without those
 * minutes and said nothing, in its result, its printed lines or its log: the one export most
 * people read left them out unseen. The tick now says it as the manual export does, on stderr even
 * with --quiet (as it says stale apps).
 */
const tmp = tempDir('probe68-tick-unplaced-');
afterAll(() => tmp.cleanup());

describe("the scheduled export says which minutes no period's figures include", () => {
  it('a call with minutes but no start, initiated in the exported month: named by the tick', async () => {
    const service = await FakeCallsService.start({ seed: 68, calls: 30, ongoing: 0, spanHours: 1 });
    const db = join(tmp.dir, 'tick.db');
    const exportDir = join(tmp.dir, 'exports');
    const store = await openStore(db);
    const dispatcher = new Agent({ keepAliveTimeout: 5_000 });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const unstarted = service.calls.find((c) => c.status === 'ended' && c.startedAt !== undefined && c.participants.some((p) => p.totalDuration > 0)) as FakeCall;
      delete unstarted.startedAt;
      const minutes = unstarted.participants.reduce((n, p) => n + p.totalDuration, 0);
      const settings = settingsAt(service.baseUrls(), db, { detailFetch: 'always', schedule: { exportDayOfMonth: 1, exportDir, exportFormat: 'csv', reconcile: false, timezone: 'UTC' } });
      // The tick of the 1st of next month (02:00 UTC): it exports the month the calls were made in.
      const made = new Date(unstarted.initiatedAt * 1000);
      const tickAt = Date.UTC(made.getUTCFullYear(), made.getUTCMonth() + 1, 1, 2);
      const startedAt = Date.now();
      const clock: Clock = { ...systemClock, now: () => tickAt + (Date.now() - startedAt) };
      const month = made.toISOString().slice(0, 7);

      const result = await runScheduledTick({ db: store.db, dispatcher, clock, log: silentLogger }, settings);
      if (result.skipped) throw new Error(result.reason);
      expect(result.summary.results.map((r) => r.status)).toEqual(['ok']);
      // The file leaves the call's minutes out (a call belongs to the period of its start) ...
      const rows = parse(readFileSync(result.exportPath!, 'utf8'), { columns: true }) as Record<string, string>[];
      const total = rows.find((r) => r.row_kind === 'total')!;
      const started = service.calls.filter((c) => c.startedAt !== undefined);
      expect(Number(total.calls)).toBe(started.length);
      expect(Number(total.user_minutes) + Number(total.flagged_user_minutes)).toBeCloseTo(started.reduce((n, c) => n + c.participants.reduce((m, p) => m + p.totalDuration, 0), 0), 3);
      // ... and the tick says so, with the minutes the file does not hold, even with --quiet.
      const said = new RegExp(`app app1 \\(us\\): 1 call\\(s\\) initiated in ${month} hold ${String(Math.round(minutes * 1e4) / 1e4).replace('.', '\\.')} user-minutes but no start time`);
      printFollowUp(result, true);
      const printed = errors.mock.calls.map((c) => String(c[0])).join('\n');
      expect(printed).toMatch(said);
    } finally {
      errors.mockRestore();
      await dispatcher.close();
      await store.close();
      await service.close();
    }
  }, 60_000);
});
