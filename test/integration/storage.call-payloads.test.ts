import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { migrateToLatest, migrationProvider } from '../../src/store/migrate.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, pgExec, testDialects } from '../helpers/databases.js';
import { startTestSim, syncWith, tempDir, TEST_KEY, testSettings, withStore } from '../helpers/harness.js';

const dialects = await testDialects();
const APP = 'app1';
const BEFORE_PAYLOADS = '20261123T020000_run_owner';

/** What the simulator serves, fetched over HTTP as any client would: every list entry, and Get Call of `ids`. */
async function served(sim: Simulator, ids: readonly string[]): Promise<{ listed: Map<string, unknown[]>; got: Map<string, unknown> }> {
  const { callsBaseUrl } = sim.baseUrls(APP);
  const get = async (path: string): Promise<{ data: unknown }> => {
    const res = await fetch(`${callsBaseUrl}${path}`, { headers: { apikey: TEST_KEY } });
    expect(res.status).toBe(200);
    return (await res.json()) as { data: unknown };
  };
  const listed = new Map<string, unknown[]>();
  for (let page = 1; ; page++) {
    const body = (await get(`/calls?page=${page}&perPage=100`)) as { data: { sessionId: string }[] };
    if (body.data.length === 0) break;
    for (const e of body.data) listed.set(e.sessionId, [...(listed.get(e.sessionId) ?? []), e]);
  }
  const got = new Map<string, unknown>();
  for (const id of ids) {
    const body = await get(`/calls/${encodeURIComponent(id)}`);
    got.set(id, Array.isArray(body.data) ? body.data[0] : body.data);
  }
  return { listed, got };
}

/** A login role that may only read (as docs/schema.md sets one up), dropped after the test. */
async function readerRole(db: string): Promise<string> {
  const role = `cs_payload_reader_${Math.random().toString(16).slice(2, 10)}`;
  await pgExec(db, `create role ${role} login in role pg_read_all_data`);
  onTestFinished(() => pgExec(db, `drop role if exists ${role}`));
  const u = new URL(db);
  u.username = role;
  return u.toString();
}

/**
 * Issue 16: the raw payload moved from `calls.raw_json` to `call_payloads` (migration
 * 20261123T030000). From the user's side: after a real sync every call's payload is in the new table
 * and is what the service served; the old query runs through `callsync query` on the compatibility
 * view with one word changed; and a database made before the migration keeps every payload.
 */
describe.each(dialects)('call payloads in their own table [%s]', (dialect) => {
  let sim: Simulator;
  const tmp = tempDir('callsync-payloads-');
  const dbs = databaseFactory(dialect, tmp.dir);
  let db: string;
  beforeAll(async () => {
    sim = await startTestSim([{ appId: APP, calls: 300 }]);
    db = await dbs.fresh('payloads');
    expect((await syncWith(testSettings(sim, [APP], db))).ok).toBe(true);
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('holds every call’s payload as served: the Get Call answer, or the list entry when no Get was needed', async () => {
    const stored = await withStore(db, (s) =>
      s.db.selectFrom('calls as c').leftJoin('call_payloads as p', (j) => j.onRef('p.app_id', '=', 'c.app_id').onRef('p.session_id', '=', 'c.session_id'))
        .select(['c.session_id', 'c.details_source', 'p.raw_json']).where('c.app_id', '=', APP).execute(),
    );
    expect(stored.length).toBe(300);
    const { listed, got } = await served(sim, stored.filter((r) => r.details_source === 'detail').map((r) => r.session_id));
    expect(got.size).toBeGreaterThan(0);
    for (const r of stored) {
      expect(r.raw_json, r.session_id).not.toBeNull();
      const payload: unknown = JSON.parse(r.raw_json!);
      if (r.details_source === 'detail') expect(payload, r.session_id).toEqual(got.get(r.session_id));
      else expect(listed.get(r.session_id), r.session_id).toContainEqual(payload);
    }
    const n = await withStore(db, async (s) => Number((await sql<{ n: number }>`select count(*) as n from call_payloads`.execute(s.db)).rows[0]!.n));
    expect(n).toBe(300);
  });

  it('answers the old `select raw_json from calls` through `callsync query` on calls_with_payload', async () => {
    // On PostgreSQL `callsync query` refuses a superuser: the documented reader role runs it.
    const q = dialect === 'postgres' ? await readerRole(db) : db;
    const old = "select session_id, raw_json from calls where status = 'ended' order by session_id";
    const refused = await runCli(['query', '--database', q, '--format', 'json', old]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/raw_json/);
    const res = await runCli(['query', '--database', q, '--format', 'json', '--limit', '0', old.replace('from calls', 'from calls_with_payload')]);
    expect(res.code, res.stderr).toBe(0);
    const rows = JSON.parse(res.stdout) as { session_id: string; raw_json: string }[];
    const want = await withStore(db, (s) =>
      s.db.selectFrom('calls as c').innerJoin('call_payloads as p', (j) => j.onRef('p.app_id', '=', 'c.app_id').onRef('p.session_id', '=', 'c.session_id'))
        .select(['c.session_id', 'p.raw_json']).where('c.status', '=', 'ended').orderBy('c.session_id').execute(),
    );
    expect(rows.length).toBeGreaterThan(100);
    expect(rows).toEqual(want);
  });

  it('upgrades a database made before the move with every payload kept', async () => {
    const url = await dbs.fresh('upgrade-payloads');
    const payloads = [JSON.stringify({ sessionId: 's1', x: 'ünïcode \u0000', n: 12.916666666666666 }), JSON.stringify({ sessionId: 's2', participants: [{ uid: 'u' }] })];
    await withStore(url, async (s) => {
      const r = await new Migrator({ db: s.db, provider: migrationProvider(s.db) }).migrateTo(BEFORE_PAYLOADS);
      expect(r.error).toBeUndefined();
      for (const [i, raw] of payloads.entries()) {
        await sql`insert into calls (app_id, region, session_id, type, status, is_final, has_recording, details_source, raw_json, first_synced_at, synced_at)
          values ('a', 'us', ${`s${i + 1}`}, 'audio', 'ended', 1, 0, 'detail', ${raw}, 1, 1)`.execute(s.db);
      }
      await sql`insert into call_participants (app_id, session_id, seq, uid, device_id, total_audio_minutes, total_video_minutes, total_duration_minutes, is_joined)
        values ('a', 's1', 0, 'u1', 'd1', 2, 0, 2, 1), ('a', 's1', 1, 'u2', 'd2', 1.5, 0, 1.5, 1)`.execute(s.db);

      await migrateToLatest(s.db);

      const moved = await s.db.selectFrom('call_payloads').select(['session_id', 'raw_json']).orderBy('session_id').execute();
      expect(moved).toEqual([{ session_id: 's1', raw_json: payloads[0] }, { session_id: 's2', raw_json: payloads[1] }]);
      const view = await sql<{ session_id: string; status: string; raw_json: string }>`select session_id, status, raw_json from calls_with_payload order by session_id`.execute(s.db);
      expect(view.rows).toEqual([{ session_id: 's1', status: 'ended', raw_json: payloads[0] }, { session_id: 's2', status: 'ended', raw_json: payloads[1] }]);
      const cols = (await s.db.introspection.getTables()).find((t) => t.name === 'calls')!.columns.map((c) => c.name);
      expect(cols).not.toContain('raw_json');
      const parts = await s.db.selectFrom('call_participants').select(['seq', 'uid', 'total_duration_minutes']).orderBy('seq').execute();
      expect(parts).toEqual([{ seq: 0, uid: 'u1', total_duration_minutes: 2 }, { seq: 1, uid: 'u2', total_duration_minutes: 1.5 }]);
      // A deleted call takes its payload and participants with it (foreign keys, cascade).
      await s.db.deleteFrom('calls').where('session_id', '=', 's1').execute();
      expect((await s.db.selectFrom('call_payloads').select('session_id').execute()).map((r) => r.session_id)).toEqual(['s2']);
      expect(await s.db.selectFrom('call_participants').select('seq').execute()).toEqual([]);
    });
  });
});
