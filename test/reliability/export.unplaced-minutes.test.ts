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
async function expectSaidEverywhere(o: { config: string; months: string[]; line: RegExp; page: string; pageText: string; query: RegExp; sessionId: string }): Promise<void> {
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
  expect((JSON.parse(listed.stdout) as { session_id: string }[]).map((r) => r.session_id)).toEqual([o.sessionId]);
}

describe('minutes of calls without a start time are said, not silently left out', () => {
  it('export billing and report name the calls and their user-minutes, and the query that lists them', async () => {
    const service = await FakeCallsService.start({ seed: 94, calls: 40, ongoing: 0, spanHours: 1 });
    try {
      const [unstarted, earlier, gone] = service.calls.filter((c) => c.status === 'ended' && c.startedAt !== undefined && c.participants.some((p) => p.totalDuration > 0)) as [FakeCall, FakeCall, FakeCall];
      for (const c of [unstarted, earlier, gone]) delete c.startedAt;
      // Another such call initiated a year before, and one the service no longer has: neither is in
      // this period's note, nor in the query it prints (which listed every period's, and gone ones).
      earlier.initiatedAt -= 366 * 86_400;
      delete earlier.endedAt;
      const database = join(tmp.dir, 'unplaced.db');
      expect((await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'always' }))).results[0]!.status).toBe('ok');
      await withStore(database, ({ db }) => db.updateTable('calls').set({ not_found_at: 1 }).where('session_id', '=', gone.sessionId).execute());
      const stored = await withStore(database, ({ db }) => db.selectFrom('calls').select(['started_at', 'participant_total_minutes']).where('session_id', '=', unstarted.sessionId).executeTakeFirstOrThrow());
      expect(stored.started_at).toBeNull();
      expect(stored.participant_total_minutes).toBeGreaterThan(0);
      const minutes = Math.round(stored.participant_total_minutes * 1e4) / 1e4;

      const month = new Date(unstarted.initiatedAt * 1000).toISOString().slice(0, 7);
      const config = join(tmp.dir, 'unplaced.json');
      writeFileSync(config, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, ...service.baseUrls('app1') }] }));
      const line = new RegExp(`^callsync: warning: app app1 \\(us\\): 1 call\\(s\\) initiated in ${month} hold ${String(minutes).replace('.', '\\.')} user-minutes but no start time, so no period's figures include them; list them with callsync query "select [^"]+"$`, 'm');

      await expectSaidEverywhere({ config, months: [month], line, page: join(tmp.dir, 'unplaced.html'), pageText: `1 call(s) initiated in ${month} hold ${minutes} user-minutes but no start time`, query: /callsync query "([^"]+)"/, sessionId: unstarted.sessionId });
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
      // A second such call the service no longer has: in neither the note nor the query it prints
      // (the query listed it, the note did not count it).
      await withStore(database, ({ db }) => db.updateTable('calls').set({ not_found_at: 1 }).where('session_id', '=', gone!.sessionId).execute());
      const stored = await withStore(database, ({ db }) => db.selectFrom('calls').select(['initiated_at', 'ended_at', 'participant_total_minutes']).where('session_id', '=', timeless!.sessionId).executeTakeFirstOrThrow());
      expect([stored.initiated_at, stored.ended_at]).toEqual([null, null]);
      const minutes = Math.round(stored.participant_total_minutes * 1e4) / 1e4;
      expect(minutes).toBeGreaterThan(0);

      const config = join(tmp.dir, 'timeless.json');
      writeFileSync(config, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, ...service.baseUrls('app1') }] }));
      const line = new RegExp(`^callsync: warning: app app1 \\(us\\): 1 call\\(s\\) hold ${String(minutes).replace('.', '\\.')} user-minutes but no time at all \\(no start, initiation or end\\), so no period's figures include them; list them with callsync query "select [^"]+"$`, 'm');
      // The month the other calls are in, and one far from any call: the note is in both.
      await expectSaidEverywhere({ config, months: [month, '2001-01'], line, page: join(tmp.dir, 'timeless.html'), pageText: `1 call(s) hold ${minutes} user-minutes but no time at all`, query: /no time at all[^\n]*callsync query "([^"]+)"/, sessionId: timeless!.sessionId });
    } finally {
      await service.close();
    }
  });
});
