import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { migrateToLatest, migrationProvider } from '../../src/store/migrate.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, pgExec, testDialects } from '../helpers/databases.js';
import type { Store } from '../../src/store/connection.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';

const dialects = await testDialects();
const APP = 'app1';
const BEFORE = '20261123T040000_period_columns';
/** The sqlite3 shell of the system (3.40 here, older than SQLite's JSONB): what an ad hoc user may have. */
const SQLITE3 = '/usr/bin/sqlite3';

/** Payloads a migration could mangle: non-ASCII, escapes, a float's digits, one larger than a 16 KB page. */
const PAYLOADS = [
  JSON.stringify({ sessionId: 's1', x: 'ünïcode 📞 \u0000 "quoted" \\', n: 12.916666666666666 }),
  JSON.stringify({ sessionId: 's2', participants: [{ uid: 'u' }] }),
  JSON.stringify({ sessionId: 's3', big: 'x'.repeat(40_000), participants: Array.from({ length: 50 }, (_, i) => ({ uid: `u${i}`, totalDuration: i / 3 })) }),
];

/**
 * Issue 16 (≤ 2,500 bytes per call): the payloads are stored in `call_payload_rows`, keyed by the new
 * integer `calls.call_id`, instead of by the text key in a table of their own with its own index
 * (migration 20261126T010000). What users had keeps working: `call_payloads` is a view with the same
 * columns, `calls_with_payload` reads the new table, and a database made before keeps every payload
 * byte for byte.
 */
describe.each(dialects)('payloads keyed by calls.call_id [%s]', (dialect) => {
  const tmp = tempDir('callsync-payload-id-');
  const dbs = databaseFactory(dialect, tmp.dir);
  let sim: Simulator;
  let synced: string;
  beforeAll(async () => {
    sim = await startTestSim([{ appId: APP, calls: 200 }]);
    synced = await dbs.fresh('synced');
    expect((await syncWith(testSettings(sim, [APP], synced))).ok).toBe(true);
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('upgrades a database made at 20261123T040000: every payload byte-identical, in the view and in calls_with_payload', async () => {
    const url = await dbs.fresh('upgrade');
    await withStore(url, async (s) => {
      expect((await new Migrator({ db: s.db, provider: migrationProvider(s.db) }).migrateTo(BEFORE)).error).toBeUndefined();
      for (const [i, raw] of PAYLOADS.entries()) {
        const id = `s${i + 1}`;
        await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, first_synced_at, synced_at, started_at, started_day, started_month)
          values ('a', 'us', ${id}, 'audio', 'ended', 1, 0, 'detail', 1, 1, ${1_700_000_000 + i}, '2023-11-14', '2023-11')`.execute(s.db);
        await sql`insert into call_payloads (app_id, session_id, raw_json) values ('a', ${id}, ${raw})`.execute(s.db);
      }
      await sql`insert into call_participants (app_id, session_id, seq, uid, device_id, total_audio_minutes, total_video_minutes, total_duration_minutes, is_joined)
        values ('a', 's1', 0, 'u1', 'd1', 2, 0, 2, 1), ('a', 's1', 1, 'u2', 'd2', 1.5, 0, 1.5, 1)`.execute(s.db);
      await sql`insert into call_recordings (app_id, session_id, rid, duration_minutes) values ('a', 's3', 'r1', 1.5)`.execute(s.db);

      await migrateToLatest(s.db);

      const want = PAYLOADS.map((raw, i) => ({ session_id: `s${i + 1}`, raw_json: raw }));
      expect(await sql`select session_id, raw_json from call_payloads order by session_id`.execute(s.db).then((r) => r.rows)).toEqual(want);
      expect(await sql`select session_id, raw_json from calls_with_payload order by session_id`.execute(s.db).then((r) => r.rows)).toEqual(want);
      // Stored once, by the call's integer id: no text key in the payload rows.
      const rows = await sql<{ session_id: string; call_id: number; raw_json: string }>`
        select c.session_id, p.call_id, p.raw_json from call_payload_rows p join calls c on c.call_id = p.call_id order by c.session_id`.execute(s.db);
      expect(rows.rows.map((r) => [r.session_id, r.raw_json])).toEqual(want.map((w) => [w.session_id, w.raw_json]));
      expect(new Set(rows.rows.map((r) => Number(r.call_id))).size).toBe(3);
      const payloadCols = (await s.db.introspection.getTables()).find((t) => t.name === 'call_payload_rows')!.columns.map((c) => c.name);
      expect(payloadCols).toEqual(['call_id', 'raw_json']);
      // The children came through the rebuild of calls (SQLite) untouched.
      expect(await s.db.selectFrom('call_participants').select(['session_id', 'seq', 'uid']).orderBy('seq').execute()).toEqual([
        { session_id: 's1', seq: 0, uid: 'u1' }, { session_id: 's1', seq: 1, uid: 'u2' },
      ]);
      expect(await s.db.selectFrom('call_recordings').select(['session_id', 'rid']).execute()).toEqual([{ session_id: 's3', rid: 'r1' }]);
      if (dialect === 'sqlite') {
        expect((await sql`pragma foreign_key_check`.execute(s.db)).rows).toEqual([]);
        expect((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(s.db)).rows).toEqual([{ integrity_check: 'ok' }]);
      }
      // A deleted call takes its payload and participants with it (foreign keys, cascade).
      await s.db.deleteFrom('calls').where('session_id', '=', 's1').execute();
      expect((await sql<{ session_id: string }>`select session_id from call_payloads order by session_id`.execute(s.db)).rows.map((r) => r.session_id)).toEqual(['s2', 's3']);
      expect(Number((await sql<{ n: number }>`select count(*) as n from call_payload_rows`.execute(s.db)).rows[0]!.n)).toBe(2);
      expect(await s.db.selectFrom('call_participants').select('seq').execute()).toEqual([]);
    });
  });

  it('migrating down and up again keeps every payload', async () => {
    const url = await dbs.fresh('down-up');
    await withStore(url, async (s) => {
      await migrateToLatest(s.db);
      for (const [i, raw] of PAYLOADS.entries()) {
        await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, first_synced_at, synced_at)
          values ('a', 'us', ${`s${i + 1}`}, 'audio', 'ended', 1, 0, 'detail', 1, 1)`.execute(s.db);
        await sql`insert into call_payload_rows (call_id, raw_json) select call_id, ${raw} from calls where session_id = ${`s${i + 1}`}`.execute(s.db);
      }
      const want = PAYLOADS.map((raw, i) => ({ session_id: `s${i + 1}`, raw_json: raw }));
      expect((await new Migrator({ db: s.db, provider: migrationProvider(s.db) }).migrateDown()).error).toBeUndefined();
      expect((await sql`select session_id, raw_json from call_payloads order by session_id`.execute(s.db)).rows).toEqual(want);
      await migrateToLatest(s.db);
      expect((await sql`select session_id, raw_json from call_payloads order by session_id`.execute(s.db)).rows).toEqual(want);
    });
  });

  it('a sync stores each payload once, under its call’s id; a changed call’s payload is rewritten under the same id', async () => {
    const stored = (s: Store): Promise<{ session_id: string; call_id: number; raw_json: string }[]> =>
      s.db.selectFrom('calls as c').innerJoin('call_payload_rows as p', 'p.call_id', 'c.call_id').select(['c.session_id', 'c.call_id', 'p.raw_json']).execute();
    const count = (s: Store, table: 'calls' | 'call_payload_rows'): Promise<number> =>
      s.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n));
    const before = new Map((await withStore(synced, stored)).map((r) => [r.session_id, r]));
    expect(before.size).toBe(200);
    expect(await withStore(synced, (s) => count(s, 'call_payload_rows'))).toBe(200);

    const change = sim.advance(APP, { endOngoing: true, addRecordings: 3, newCalls: 5 });
    expect(change.recorded.length + change.ended.length).toBeGreaterThan(0);
    expect((await syncWith(testSettings(sim, [APP], synced))).ok).toBe(true);

    const after = new Map((await withStore(synced, stored)).map((r) => [r.session_id, r]));
    expect(after.size).toBe(205);
    expect(await withStore(synced, (s) => count(s, 'call_payload_rows'))).toBe(await withStore(synced, (s) => count(s, 'calls')));
    for (const [id, b] of before) expect(after.get(id)!.call_id, id).toBe(b.call_id);
    for (const id of [...change.recorded, ...change.ended]) {
      expect(after.get(id)!.raw_json, id).not.toBe(before.get(id)!.raw_json);
      expect((JSON.parse(after.get(id)!.raw_json) as { status: string }).status, id).not.toMatch(/^(initiated|ongoing)$/);
    }
    for (const id of change.recorded) expect(after.get(id)!.raw_json, id).toContain('"recordings"');
    const oldest = Math.max(...[...before.values()].map((b) => Number(b.call_id)));
    for (const id of change.added) expect(Number(after.get(id)!.call_id), id).toBeGreaterThan(oldest);
  });

  it('ad hoc SQL reads the payload through `callsync query`: the table’s old name, a join by key, and json', async () => {
    let q = synced;
    if (dialect === 'postgres') {
      // `callsync query` refuses a superuser: the documented read-only role runs it.
      const role = `cs_payload_id_${Math.random().toString(16).slice(2, 10)}`;
      await pgExec(synced, `create role ${role} login in role pg_read_all_data`);
      onTestFinished(() => pgExec(synced, `drop role if exists ${role}`));
      const u = new URL(synced);
      u.username = role;
      q = u.toString();
    }
    const want = await withStore(synced, (s) =>
      s.db.selectFrom('calls as c').innerJoin('call_payload_rows as p', 'p.call_id', 'c.call_id').select(['c.session_id', 'p.raw_json']).orderBy('c.session_id').execute(),
    );
    const query = async (text: string): Promise<unknown[]> => {
      const res = await runCli(['query', '--database', q, '--format', 'json', '--limit', '0', text]);
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout) as unknown[];
    };
    expect(await query('select session_id, raw_json from call_payloads order by session_id')).toEqual(want);
    const joined = (await query(`select r.session_id, r.relation, p.raw_json from call_reconciliation r join call_payloads p using (app_id, session_id) order by r.session_id`)) as { session_id: string; raw_json: string }[];
    expect(joined.map((r) => ({ session_id: r.session_id, raw_json: r.raw_json }))).toEqual(want);
    const field = dialect === 'sqlite' ? "json_extract(raw_json, '$.sessionId')" : "cast(raw_json as json) ->> 'sessionId'";
    const ids = (await query(`select session_id, ${field} as sid from call_payloads order by session_id`)) as { session_id: string; sid: string }[];
    expect(ids.every((r) => r.sid === r.session_id)).toBe(true);
  });

  it.runIf(dialect === 'sqlite' && existsSync(SQLITE3))('an ordinary sqlite3 shell reads the payloads as text', async () => {
    const want = await withStore(synced, (s) => s.db.selectFrom('call_payloads').select(['session_id', 'raw_json']).orderBy('session_id').execute());
    const res = spawnSync(SQLITE3, ['-readonly', '-json', synced, 'select session_id, raw_json, json_valid(raw_json) as ok from call_payloads order by session_id'], { encoding: 'utf8' });
    expect(res.status, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(want.map((w) => ({ ...w, ok: 1 })));
  });
});
