import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BILLING_COLUMNS, computeBilling } from '../../src/export/billing.js';
import { localMidnight, resolvePeriod } from '../../src/export/period.js';
import type { Simulator } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, TEST_KEY, testConfig, testSettings, withStore } from '../helpers/harness.js';

const dialects = await testDialects();

describe.each(dialects)('billing export, reconcile and query commands [%s]', (dialect) => {
  let sim: Simulator;
  const tmp = tempDir();
  const dbs = databaseFactory(dialect, tmp.dir);
  let db: string;
  const cfg = join(tmp.dir, 'config.json');
  beforeAll(async () => {
    db = await dbs.fresh('billing');
    // Half a year of calls each (the simulator's span whatever the count): some hundreds in 2025-11.
    sim = await startTestSim([{ appId: 'app1', calls: 1500 }, { appId: 'app2', calls: 600 }]);
    expect((await syncWith(testSettings(sim, ['app1', 'app2'], db))).ok).toBe(true);
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1', 'app2'], db)));
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it("export totals equal figures summed independently from the raw tables", async () => {
    const period = resolvePeriod({ month: '2025-11' });
    await withStore(db, async (s) => {
      const rows = await computeBilling(s.db, period);
      expect(rows.map((r) => `${r.app_id}/${r.type}`)).toEqual(['app1/audio', 'app1/video', 'app1/all', 'app2/audio', 'app2/video', 'app2/all']);
      const indep = await sql<{ app_id: string; calls: number; user_minutes: number; audio: number; video: number; call_total: number; rec: number }>`
        select c.app_id, count(*) as calls,
               coalesce(sum((select sum(total_duration_minutes) from call_participants p where p.app_id = c.app_id and p.session_id = c.session_id)), 0) as user_minutes,
               coalesce(sum((select sum(total_audio_minutes) from call_participants p where p.app_id = c.app_id and p.session_id = c.session_id)), 0) as audio,
               coalesce(sum((select sum(total_video_minutes) from call_participants p where p.app_id = c.app_id and p.session_id = c.session_id)), 0) as video,
               coalesce(sum(c.total_duration_minutes), 0) as call_total,
               coalesce(sum((select sum(duration_minutes) from call_recordings r where r.app_id = c.app_id and r.session_id = c.session_id)), 0) as rec
        from calls c where c.started_at >= ${period.start} and c.started_at < ${period.end}
        group by c.app_id order by c.app_id`.execute(s.db);
      for (const want of indep.rows) {
        const all = rows.find((r) => r.app_id === want.app_id && r.type === 'all')!;
        expect(all.calls).toBe(want.calls);
        expect(all.user_minutes).toBeCloseTo(want.user_minutes, 6);
        expect(all.participant_audio_minutes).toBeCloseTo(want.audio, 6);
        expect(all.participant_video_minutes).toBeCloseTo(want.video, 6);
        expect(all.call_total_minutes).toBeCloseTo(want.call_total, 6);
        expect(all.recording_minutes).toBeCloseTo(want.rec, 6);
        const types = rows.filter((r) => r.app_id === want.app_id && r.type !== 'all');
        expect(types.reduce((n, r) => n + r.calls, 0)).toBe(want.calls);
        expect(all.calls_participant_sum + all.calls_wall_clock + all.calls_mismatch + all.calls_incomplete).toBe(want.calls);
      }
      // And against the simulator's own truth, summed in TypeScript.
      let truthMinutes = 0;
      for (const c of sim.truth('app1').calls.values()) {
        if (c.startedAt !== null && c.startedAt >= period.start && c.startedAt < period.end) truthMinutes += c.participants.reduce((n, p) => n + p.totalMinutes, 0);
      }
      expect(rows.find((r) => r.app_id === 'app1' && r.type === 'all')!.user_minutes).toBeCloseTo(truthMinutes, 6);
    });
  });

  it('writes CSV that round-trips through a CSV parser, byte-identical on every run', async () => {
    const out1 = join(tmp.dir, 'b1.csv');
    const out2 = join(tmp.dir, 'b2.csv');
    const [a, b] = await Promise.all([runCli(['export', 'billing', '--database', db, '--month', '2025-11', '--out', out1]), runCli(['export', 'billing', '--database', db, '--month', '2025-11', '--out', out2])]);
    expect([a.code, b.code, a.stderr]).toEqual([0, 0, '']);
    const text = readFileSync(out1, 'utf8');
    expect(readFileSync(out2, 'utf8')).toBe(text);
    const records = parse(text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(records[0]!)).toEqual([...BILLING_COLUMNS]);
    const rows = await withStore(db, (s) => computeBilling(s.db, resolvePeriod({ month: '2025-11' })));
    expect(records.length).toBe(rows.length);
    records.forEach((rec, i) => {
      const row = rows[i]!;
      expect(rec.app_id).toBe(row.app_id);
      expect(Number(rec.calls)).toBe(row.calls);
      expect(rec.user_minutes).toMatch(/^-?\d+\.\d{4}$/);
      expect(Number(rec.user_minutes)).toBeCloseTo(row.user_minutes, 4);
    });
  });

  it('puts a call in the period of its started_at in the given time zone', async () => {
    const tz = 'America/New_York';
    const period = resolvePeriod({ month: '2025-11', timezone: tz });
    expect(period.start).toBe(localMidnight(2025, 11, 1, tz));
    expect(period.start).toBe(Date.parse('2025-11-01T04:00:00Z') / 1000); // EDT, UTC-4
    expect(period.end).toBe(Date.parse('2025-12-01T05:00:00Z') / 1000); // EST, UTC-5
    const res = await runCli(['export', 'billing', '--database', db, '--month', '2025-11', '--timezone', tz, '--format', 'json', '--app', 'app1']);
    expect(res.code).toBe(0);
    const json = JSON.parse(res.stdout) as { type: string; calls: number; period_start: string }[];
    const all = json.find((r) => r.type === 'all')!;
    const expected = [...sim.truth('app1').calls.values()].filter((c) => c.startedAt !== null && c.startedAt >= period.start && c.startedAt < period.end).length;
    expect(all.calls).toBe(expected);
    expect(all.period_start).toBe('2025-11-01T04:00:00Z');
  });

  it("--with-usage adds the service's figures, which match the synced user-minutes", async () => {
    const res = await runCli(['export', 'billing', '--config', cfg, '--month', '2025-11', '--with-usage', '--format', 'json'], { [KEY_ENV]: TEST_KEY });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const rows = JSON.parse(res.stdout) as Record<string, number | string | null>[];
    for (const r of rows) {
      if (r.type === 'all') {
        expect(typeof r.usage_audio_minutes).toBe('number');
        expect(Math.abs(r.usage_audio_delta_minutes as number)).toBeLessThan(1e-3);
        expect(Math.abs(r.usage_video_delta_minutes as number)).toBeLessThan(1e-3);
      } else expect(r.usage_audio_minutes).toBeNull();
    }
    expect(res.stdout).not.toContain(TEST_KEY);
  });

  it('--detail lists one line per call with its relation', async () => {
    const res = await runCli(['export', 'billing', '--database', db, '--month', '2025-11', '--detail', '--app', 'app2']);
    expect(res.code).toBe(0);
    const records = parse(res.stdout, { columns: true }) as Record<string, string>[];
    const period = resolvePeriod({ month: '2025-11' });
    const expected = [...sim.truth('app2').calls.values()].filter((c) => c.startedAt !== null && c.startedAt >= period.start && c.startedAt < period.end);
    expect(records.length).toBe(expected.length);
    const byId = new Map(expected.map((c) => [c.sessionId, c]));
    for (const rec of records) expect(rec.relation).toBe(byId.get(rec.session_id!)!.relation);
  });

  it('reconcile prints the summary and fails on mismatches when asked', async () => {
    const res = await runCli(['reconcile', '--database', db, '--format', 'json', '--limit', '3', '--fail-on-mismatch']);
    expect(res.code).toBe(1);
    const report = JSON.parse(res.stdout) as { summary: { relation: string; calls: number }[]; mismatches: { audio_delta_minutes: number; video_delta_minutes: number }[]; mismatchCount: number };
    const truthMismatches = [...sim.truth('app1').calls.values(), ...sim.truth('app2').calls.values()].filter((c) => c.relation === 'mismatch').length;
    expect(report.mismatchCount).toBe(truthMismatches);
    expect(report.mismatches).toHaveLength(3);
    const worst = report.mismatches.map((m) => Math.abs(m.audio_delta_minutes) + Math.abs(m.video_delta_minutes));
    expect([...worst].sort((x, y) => y - x)).toEqual(worst);
    const loose = await runCli(['reconcile', '--database', db, '--format', 'json', '--tolerance', '100000', '--fail-on-mismatch']);
    expect(loose.code).toBe(0);
    // The override did not stick.
    const again = await runCli(['reconcile', '--database', db, '--format', 'json']);
    expect((JSON.parse(again.stdout) as { mismatchCount: number }).mismatchCount).toBe(truthMismatches);
  });

  it('query answers SELECTs in every format and refuses writes', async () => {
    const q = dialect === 'postgres' ? await readerRole(db) : db;
    const csv = await runCli(['query', '--database', q, '--format', 'csv', 'select app_id, count(*) as n from calls group by app_id order by app_id']);
    expect(csv.code).toBe(0);
    expect(parse(csv.stdout, { columns: true })).toEqual([
      { app_id: 'app1', n: String(sim.truth('app1').calls.size) },
      { app_id: 'app2', n: String(sim.truth('app2').calls.size) },
    ]);
    const writes = ['delete from calls', "update calls set status = 'x'", 'drop view daily_usage', 'insert into callsync_settings values (1, 2)'];
    for (const res of await Promise.all(writes.map((statement) => runCli(['query', '--database', q, statement])))) {
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/query is read-only/);
    }
    const count = await withStore(db, (s) => s.db.selectFrom('calls').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow());
    expect(count.n).toBe(sim.truth('app1').calls.size + sim.truth('app2').calls.size);
    const file = join(tmp.dir, 'q.sql');
    writeFileSync(file, 'select day, sum(user_minutes) as m from daily_usage group by day order by day desc limit 2;\n');
    const json = await runCli(['query', '--database', q, '--file', file, '--format', 'json']);
    expect(JSON.parse(json.stdout)).toHaveLength(2);
  });
});

/**
 * `db` as a role that may read everything and write nothing: on PostgreSQL, query refuses a
 * superuser such as the test server's admin. Roles are server-wide: a unique name, dropped when
 * the test ends.
 */
async function readerRole(db: string): Promise<string> {
  const role = `cs_billing_reader_${Math.random().toString(16).slice(2, 10)}`;
  const admin = async (text: string): Promise<void> => {
    const c = new pg.Client({ connectionString: db });
    await c.connect();
    await c.query(text).finally(() => c.end());
  };
  await admin(`create role ${role} login in role pg_read_all_data`);
  onTestFinished(() => admin(`drop role if exists ${role}`));
  const u = new URL(db);
  u.username = role;
  return u.toString();
}
