import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, syncWith, tempDir, TEST_KEY, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * A call belongs to the period of its start. An ended call with participant minutes but no
 * `startedAt` (a contradiction the service's data may hold) was therefore in no export, report or
 * view of any period, with nothing said, exit 0 (probe round 16 a, F1). Its minutes are stored as
 * sent; every export and report of the period it was initiated in now says how many such calls and
 * minutes no period includes, and how to list them.
 */
const tmp = tempDir('callsync-unplaced-');
afterAll(() => tmp.cleanup());

/**
 * The export of each month and the report of the first say `line`; the report's page holds
 * `pageText`; the query the export's line names (`query`'s group) lists exactly `sessionId`.
 */
async function expectSaidEverywhere(o: { config: string; months: string[]; line: RegExp; page: string; pageText: string; query: RegExp; sessionIds: string[] }): Promise<void> {
  let stderr = '';
  for (const month of o.months) {
    const exported = await runCli(['export', 'billing', '--config', o.config, '--month', month, '--format', 'json'], { [KEY_ENV]: TEST_KEY });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(o.line);
    stderr ||= exported.stderr;
  }
  const report = await runCli(['report', '--config', o.config, '--month', o.months[0]!, '--out', o.page], { [KEY_ENV]: TEST_KEY });
  expect(report.code, report.stderr).toBe(0);
  expect(report.stderr).toMatch(o.line);
  expect(readFileSync(o.page, 'utf8')).toContain(o.pageText);
  const listed = await runCli(['query', '--config', o.config, '--format', 'json', o.query.exec(stderr)![1]!], { [KEY_ENV]: TEST_KEY });
  expect((JSON.parse(listed.stdout) as { session_id: string }[]).map((r) => r.session_id).sort()).toEqual([...o.sessionIds].sort());
}

describe('minutes of calls without a start time are said, not silently left out', () => {
  it('export billing and report name the calls and their user-minutes, and the query that lists them', async () => {
    const service = await FakeCallsService.start({ seed: 94, calls: 40, ongoing: 0, spanHours: 1 });
    try {
      const [unstarted, earlier, gone] = service.calls.filter((c) => c.status === 'ended' && c.startedAt !== undefined && c.participants.some((p) => p.totalDuration > 0)) as [FakeCall, FakeCall, FakeCall];
      for (const c of [unstarted, earlier, gone]) delete c.startedAt;
      // Another such call initiated a year before: in neither this period's note nor the query it
      // prints (which listed every period's). One the service no longer has is in both, said apart:
      // its row is kept and billed like any call's (probe73; it was left out of both).
      earlier.initiatedAt -= 366 * 86_400;
      delete earlier.endedAt;
      const database = join(tmp.dir, 'unplaced.db');
      expect((await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      await withStore(database, ({ db }) => db.updateTable('calls').set({ not_found_at: 1 }).where('session_id', '=', gone.sessionId).execute());
      const stored = await withStore(database, ({ db }) => db.selectFrom('calls').select(['started_at', 'participant_total_minutes']).where('session_id', 'in', [unstarted.sessionId, gone.sessionId]).execute());
      expect(stored.map((s) => s.started_at)).toEqual([null, null]);
      expect(Math.min(...stored.map((s) => s.participant_total_minutes))).toBeGreaterThan(0);
      const minutes = Math.round(stored.reduce((n, s) => n + s.participant_total_minutes, 0) * 1e4) / 1e4;

      const month = new Date(unstarted.initiatedAt * 1000).toISOString().slice(0, 7);
      expect(new Date(gone.initiatedAt * 1000).toISOString().slice(0, 7)).toBe(month);
      const config = join(tmp.dir, 'unplaced.json');
      writeFileSync(config, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, ...service.baseUrls('app1') }] }));
      const line = new RegExp(`^callsync: warning: app app1 \\(us\\): 2 call\\(s\\) initiated in ${month} hold ${String(minutes).replace('.', '\\.')} user-minutes but no start time \\(1 of them marked not found: the service no longer has them; their rows are kept and billed like any call's\\), so no period's figures include them; list them with callsync query "select [^"]+"$`, 'm');

      await expectSaidEverywhere({ config, months: [month], line, page: join(tmp.dir, 'unplaced.html'), pageText: `2 call(s) initiated in ${month} hold ${minutes} user-minutes but no start time`, query: /callsync query "([^"]+)"/, sessionIds: [unstarted.sessionId, gone.sessionId] });
    } finally {
      await service.close();
    }
  });

  it('a call with minutes and no time at all is named in the export and report of any period', async () => {
    const service = await FakeCallsService.start({ seed: 95, calls: 40, ongoing: 0, spanHours: 1 });
    try {
      const [timeless, gone] = service.calls.filter((c) => c.status === 'ended' && c.startedAt !== undefined && c.participants.some((p) => p.totalDuration > 0));
      const month = new Date(timeless!.initiatedAt * 1000).toISOString().slice(0, 7);
      for (const c of [timeless!, gone!]) {
        const record = c as unknown as Record<string, unknown>;
        for (const k of ['startedAt', 'initiatedAt', 'endedAt']) delete record[k];
      }
      const database = join(tmp.dir, 'timeless.db');
      expect((await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      // A second such call the service no longer has: in both the note (said apart) and the query it
      // prints (the query once listed it while the note did not count it; then neither did, probe73).
      await withStore(database, ({ db }) => db.updateTable('calls').set({ not_found_at: 1 }).where('session_id', '=', gone!.sessionId).execute());
      const stored = await withStore(database, ({ db }) => db.selectFrom('calls').select(['initiated_at', 'ended_at', 'participant_total_minutes']).where('session_id', 'in', [timeless!.sessionId, gone!.sessionId]).execute());
      expect(stored.map((s) => [s.initiated_at, s.ended_at])).toEqual([[null, null], [null, null]]);
      const minutes = Math.round(stored.reduce((n, s) => n + s.participant_total_minutes, 0) * 1e4) / 1e4;
      expect(minutes).toBeGreaterThan(0);

      const config = join(tmp.dir, 'timeless.json');
      writeFileSync(config, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, ...service.baseUrls('app1') }] }));
      const line = new RegExp(`^callsync: warning: app app1 \\(us\\): 2 call\\(s\\) hold ${String(minutes).replace('.', '\\.')} user-minutes but no time at all \\(no start, initiation or end\\) \\(1 of them marked not found[^)]*\\), so no period's figures include them; list them with callsync query "select [^"]+"$`, 'm');
      // The month the other calls are in, and one far from any call: the note is in both.
      await expectSaidEverywhere({ config, months: [month, '2001-01'], line, page: join(tmp.dir, 'timeless.html'), pageText: `2 call(s) hold ${minutes} user-minutes but no time at all`, query: /no time at all[^\n]*callsync query "([^"]+)"/, sessionIds: [timeless!.sessionId, gone!.sessionId] });
    } finally {
      await service.close();
    }
  });
});
