import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.js';
import { collect, runCli, spawnCli } from '../helpers/cli.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, syncWith, TEST_KEY, testSettings, withStore } from '../helpers/harness.js';
import { expectOnlyUnreadCalls } from '../helpers/unread.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

const postgres = (await testDialects()).includes('postgres');

describe.runIf(postgres)('callsync copy moves a SQLite database into PostgreSQL', () => {
  test.override({ dialect: 'postgres', simApps: [{ calls: 1500 }], simFaults: { notFoundCalls: 3, malformedCalls: 2, details: { transcriptions: true } } });

  it('copies every row, keeps working as the destination, and can be re-run', async ({ sim, dir, newDatabase }) => {
    const file = join(dir, 'source.db');
    expectOnlyUnreadCalls((await syncWith(testSettings(sim, ['app1'], file))).results[0]!, 2);
    const url = await newDatabase('copy');
    const res = await runCli(['copy', '--from', file, '--to', url]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const n = sim.truth('app1').calls.size;
    expect(res.stdout).toContain(`calls: ${n} rows copied, ${n} in the target`);
    // Every payload, byte for byte (stored by call_id since 20261126T010000, so call ids are copied as
    // they are); participants (by call_id since 20261126T100000, WITHOUT ROWID on SQLite) are paged by their key.
    expect(res.stdout).toContain(`call_payload_rows: ${n} rows copied, ${n} in the target`);
    expect(res.stdout).toMatch(/^call_participant_rows: (\d+) rows copied, \1 in the target$/m);
    const payloads = async (db: string): Promise<string[]> => withStore(db, async (s) => (await s.db.selectFrom('call_payloads').select(['session_id', 'raw_json']).execute()).map((r) => `${r.session_id} ${r.raw_json}`).sort());
    expect(await payloads(url)).toEqual(await payloads(file));
    expect(res.stdout).toMatch(/^rejected_records: 2 rows copied, 2 in the target$/m);
    await withStore(url, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
    const again = await runCli(['copy', '--from', file, '--to', url]);
    expect(again.code).toBe(0);
    // The copy is a working destination: an incremental sync continues from the copied watermark.
    sim.advance('app1', { newCalls: 5 });
    const next = (await syncWith(testSettings(sim, ['app1'], url))).results[0]!;
    expect(next.mode).toBe('incremental');
    expect(next.callsWritten).toBe(5);
    await withStore(url, async (s) => {
      expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]);
      const runs = await s.db.selectFrom('sync_runs').select('id').orderBy('id').execute();
      expect(new Set(runs.map((r) => r.id)).size).toBe(runs.length); // the id sequence moved past the copied ids
    });
  });

  it('copies into a database that already holds calls of its own: each payload lands on its own call', async ({ sim, dir, newDatabase }) => {
    const file = join(dir, 'source.db');
    expectOnlyUnreadCalls((await syncWith(testSettings(sim, ['app1'], file))).results[0]!, 2);
    const url = await newDatabase('copy-into-used');
    // A call stored in the target first: its call_id numbers differ from the source's from here on.
    await withStore(url, async (s) => {
      await migrateToLatest(s.db);
      await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, first_synced_at, synced_at)
        values ('other', 'us', 'own-call', 'audio', 'ended', 1, 0, 'detail', 1, 1)`.execute(s.db);
      await sql`insert into call_payload_rows (call_id, raw_json) select call_id, '{"own":true}' from calls where session_id = 'own-call'`.execute(s.db);
    });
    const res = await runCli(['copy', '--from', file, '--to', url]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const payloads = async (db: string): Promise<string[]> => withStore(db, async (s) =>
      (await s.db.selectFrom('call_payloads').select(['app_id', 'session_id', 'raw_json']).execute()).map((r) => `${r.app_id} ${r.session_id} ${r.raw_json}`).sort());
    expect(await payloads(url)).toEqual([...(await payloads(file)), 'other own-call {"own":true}'].sort());
    // Participants, stored by call_id too, land on their own calls.
    const participants = async (db: string): Promise<string[]> => withStore(db, async (s) =>
      (await s.db.selectFrom('call_participants').selectAll().execute()).map((r) => JSON.stringify(Object.entries(r))).sort());
    const fromSource = await participants(file);
    expect(fromSource.length).toBeGreaterThan(0);
    expect(await participants(url)).toEqual(fromSource);
  });
});

/**
 * Probe round 16 (c, F2): a target synced on its own took a copy, exit 0, and was damaged: the
 * source's runs 1–4 replaced the target's runs 1–2 (of another app) by id, and a call held on both
 * sides got the participant rows of both.
 */
describe.runIf(postgres)('callsync copy into a database with a history of its own', () => {
  test.override({ dialect: 'postgres', simApps: [{ calls: 60 }, { calls: 60 }] });

  const runsOf = async (db: string): Promise<string[]> =>
    withStore(db, async (s) => (await s.db.selectFrom('sync_runs').select(['app_id', 'run_id', 'status']).execute()).map((r) => `${r.app_id} ${r.run_id} ${r.status}`).sort());

  it('another app synced there: its runs stay, the source runs are added once (also when copied again)', async ({ sim, dir, newDatabase }) => {
    const file = join(dir, 'source.db');
    for (let i = 0; i < 2; i++) expect((await syncWith(testSettings(sim, ['app1'], file))).results[0]!.status).toBe('ok');
    const url = await newDatabase('copy-beside');
    for (let i = 0; i < 2; i++) expect((await syncWith(testSettings(sim, ['app2'], url))).results[0]!.status).toBe('ok');
    const own = await runsOf(url);
    expect(own).toHaveLength(2);
    const res = await runCli(['copy', '--from', file, '--to', url]);
    expect(res.code, res.stderr).toBe(0);
    const expected = [...own, ...(await runsOf(file))].sort();
    expect(await runsOf(url)).toEqual(expected);
    expect((await runCli(['copy', '--from', file, '--to', url])).code).toBe(0);
    expect(await runsOf(url)).toEqual(expected);
    await withStore(url, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
  });

  it('the same app synced there: refused in one line, exit 2, the target unchanged', async ({ sim, dir, newDatabase }) => {
    const file = join(dir, 'source.db');
    expect((await syncWith(testSettings(sim, ['app1'], file))).results[0]!.status).toBe('ok');
    const url = await newDatabase('copy-same-app');
    expect((await syncWith(testSettings(sim, ['app1'], url))).results[0]!.status).toBe('ok');
    const before = await runsOf(url);
    const participants = async (): Promise<number> => withStore(url, async (s) => (await s.db.selectFrom('call_participants').select('uid').execute()).length);
    const n = await participants();
    const res = await runCli(['copy', '--from', file, '--to', url]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toMatch(/^callsync: copy: the target already holds app app1, synced there or copied from another file, not from .*source\.db; copying would mix the two histories of the same app\. Copy into an empty database \(or one holding only other apps\)$/);
    expect(await runsOf(url)).toEqual(before);
    expect(await participants()).toBe(n);
  });
});

/** Probe round 17 (a, 3 and 4): a copy killed half-way, and another file put where the source was. */
describe.runIf(postgres)('callsync copy: an unfinished copy, and another history at the same path', () => {
  test.override({ dialect: 'postgres', simApps: [{ calls: 3000 }] });

  it('a sync into a copy killed half-way is refused until the copy is run again; then both end ok and exact', async ({ sim, dir, newDatabase, writeConfig }) => {
    const file = join(dir, 'source.db');
    expect((await syncWith(testSettings(sim, ['app1'], file))).results[0]!.status).not.toBe('failed');
    const url = await newDatabase('copy-killed');
    const child = spawnCli(['copy', '--from', file, '--to', url]);
    const done = collect(child);
    // Killed once the calls are in and before the last table: the participants are what a sync would not notice.
    for (let i = 0; i < 2000 && child.exitCode === null; i++) {
      const n = await withStore(url, async (s) => {
        const has = (await sql<{ n: number }>`select count(*) as n from information_schema.tables where table_name = 'call_participant_rows'`.execute(s.db)).rows[0]!.n;
        return Number(has) ? Number((await sql<{ n: number }>`select count(*) as n from call_participant_rows`.execute(s.db)).rows[0]!.n) : 0;
      });
      if (n > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(child.exitCode, 'the copy ended before it could be killed').toBeNull();
    child.kill('SIGKILL');
    await done;
    const refused = await runCli(['sync', '--config', writeConfig({ database: url }, 'target.json')], { [KEY_ENV]: TEST_KEY });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/the database holds an unfinished copy of .*source\.db \(callsync copy stopped before its end\): run the same callsync copy again before syncing into it/);
    expect((await runCli(['copy', '--from', file, '--to', url])).code).toBe(0);
    await withStore(url, async (s) => expect(await diffAgainstTruth(s.db, sim.truth('app1'))).toEqual([]));
    expect((await syncWith(testSettings(sim, ['app1'], url))).results[0]!.status).not.toBe('failed');
  }, 120_000);

  it('another file put at the source path (another history of the same app): refused, exit 2', async ({ startSim, dir, newDatabase }) => {
    // Two histories of one app, whatever their size: a simulator of its own, not the describe's 3000
    // calls (which are there so that the copy above can be killed half-way).
    const sim = await startSim([{ calls: 300 }]);
    const file = join(dir, 'source.db');
    expect((await syncWith(testSettings(sim, ['app1'], file))).results[0]!.status).not.toBe('failed');
    const url = await newDatabase('copy-other-history');
    expect((await runCli(['copy', '--from', file, '--to', url])).code).toBe(0);
    const other = join(dir, 'other.db');
    expect((await syncWith(testSettings(sim, ['app1'], other))).results[0]!.status).not.toBe('failed');
    for (const x of ['', '-wal', '-shm']) rmSync(file + x, { force: true });
    renameSync(other, file);
    const res = await runCli(['copy', '--from', file, '--to', url]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/copy: the target already holds app app1, synced there or copied from another file/);
  }, 120_000);
});
