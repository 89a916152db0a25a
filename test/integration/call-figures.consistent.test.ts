import { join } from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { markNotFound, markStaleLiveCalls } from '../../src/store/calls-repo.js';
import { migrateToLatest, migrationProvider } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/schema.js';
import { saveTolerance } from '../../src/store/settings-repo.js';
import { ISSUE_CODES } from '../../src/reconcile/issue-codes.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';

/**
 * Issue 16: `call_figure_rows` holds, per call, what reconcile and billing read, as
 * `call_reconciliation` computes it (the view `call_figures` maps it); the store refreshes it for
 * every batch of calls it writes, a trigger on a change of the tolerance. After a sync, a re-sync
 * that changes calls, a not-found mark, a stale mark, a change of the tolerance, a deleted call, a
 * `callsync copy`, and a migration of a database that had calls before the copy existed, it is
 * exactly the view's figures. And `issue_bits` says what `issues` says.
 */
const dialects = await testDialects();

const BEFORE_FIGURES = '20261123T040000_period_columns';
/** The last migration with `call_figures` a table kept by triggers on `calls`. */
const BEFORE_CALL_ID = '20261126T030000_job_engine';

type Row = Record<string, unknown>;

/** The view's figures per call, as the stored copy should hold them: rows as comparable text. */
async function fromView(db: Kysely<Database>): Promise<string[]> {
  const r = await sql<Row>`select v.app_id, v.session_id, c.call_id, v.region, coalesce(v.type, '(none)') as type, v.started_at, v.is_final, v.relation, v.flagged, v.issue_bits,
      v.participant_audio_minutes, v.participant_video_minutes, v.participant_total_minutes,
      coalesce(v.total_audio_minutes, 0) as call_audio_minutes, coalesce(v.total_video_minutes, 0) as call_video_minutes,
      coalesce(v.total_duration_minutes, 0) as call_total_minutes, v.recording_minutes,
      abs(v.audio_delta_minutes) + abs(v.video_delta_minutes) as mismatch_size
    from call_reconciliation v join calls c on c.app_id = v.app_id and c.session_id = v.session_id`.execute(db);
  return canon(r.rows);
}

/** The stored copy, with each call's session_id from calls. */
async function fromTable(db: Kysely<Database>): Promise<string[]> {
  return canon((await sql<Row>`select f.*, c.session_id from call_figure_rows f join calls c on c.call_id = f.call_id`.execute(db)).rows);
}

/** The view `call_figures` (a table until 20261126T090000, its columns kept). */
async function figuresView(db: Kysely<Database>): Promise<string[]> {
  return canon((await sql<Row>`select * from call_figures`.execute(db)).rows);
}

/** Order-free, numbers as numbers (PostgreSQL returns bigints as text). */
function canon(rs: Row[]): string[] {
  const cell = (v: unknown): unknown => (v === null ? null : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v);
  return rs.map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, cell(r[k])]))).sort();
}

describe.each(dialects)('call_figures follows the calls and the tolerance [%s]', (dialect) => {
  let sim: Simulator;
  const tmp = tempDir();
  const dbs = databaseFactory(dialect, tmp.dir);
  let db: string;
  beforeAll(async () => {
    db = await dbs.fresh('figures');
    sim = await startTestSim([{ calls: 600 }]);
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('after a sync, a stale mark, a not-found mark and a re-sync that changes calls, holds the view figures of every call', async () => {
    const settings = testSettings(sim, ['app1'], db);
    expect((await syncWith(settings)).ok).toBe(true);
    await withStore(db, async (s) => {
      const want = await fromView(s.db);
      expect(want.length).toBe(Number((await s.db.selectFrom('calls').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n));
      expect(await fromTable(s.db)).toEqual(want);
    });
    // The marks a sync makes outside its upsert: every live call stale, one final call not found.
    await withStore(db, async (s) => {
      const before = await fromTable(s.db);
      const region = (await s.db.selectFrom('calls').select('region').executeTakeFirstOrThrow()).region;
      expect(await markStaleLiveCalls(s.db, 'app1', region, Number.MAX_SAFE_INTEGER, 1_800_000_000)).toBeGreaterThan(0);
      expect(await fromTable(s.db)).not.toEqual(before);
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));
      const one = await sql<{ session_id: string }>`select session_id from call_reconciliation where relation = 'participant_sum' order by session_id limit 1`.execute(s.db);
      const id = one.rows[0]!.session_id;
      await s.db.transaction().execute((trx) => markNotFound(trx, 'app1', [id], 1_800_000_000));
      const row = await sql<{ relation: string }>`select f.relation from call_figure_rows f join calls c on c.call_id = f.call_id where c.session_id = ${id}`.execute(s.db);
      expect(row.rows.map((r) => r.relation)).toEqual(['incomplete']);
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));
    });
    const change = sim.advance('app1', { endOngoing: true, addRecordings: 3, newCalls: 25 });
    expect(change.ended.length + change.recorded.length).toBeGreaterThan(0);
    const before = await withStore(db, (s) => fromTable(s.db));
    expect((await syncWith(settings)).ok).toBe(true);
    await withStore(db, async (s) => {
      const after = await fromTable(s.db);
      expect(after).not.toEqual(before);
      expect(after).toEqual(await fromView(s.db));
    });
  });

  it('after a tolerance change and a delete, still holds them; the view call_figures gives them too', async () => {
    await withStore(db, async (s) => {
      // The view keeps the columns the table of the same name had (plus call_id).
      expect(await figuresView(s.db)).toEqual(await fromView(s.db));

      // A tolerance so wide that every final call matches its participants: relations change.
      const relations = async (): Promise<string[]> => (await s.db.selectFrom('call_figure_rows').select('relation').distinct().orderBy('relation').execute()).map((r) => r.relation);
      expect(await relations()).toContain('mismatch');
      await saveTolerance(s.db, 100_000);
      expect(await relations()).not.toContain('mismatch');
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));
      await s.db.deleteFrom('callsync_settings').where('key', '=', 'reconcile_tolerance_minutes').execute();
      expect(await relations()).toContain('mismatch');
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));

      const one = await s.db.selectFrom('calls').select(['call_id', 'session_id']).where('is_final', '=', 1).orderBy('session_id').executeTakeFirstOrThrow();
      await s.db.deleteFrom('calls').where('session_id', '=', one.session_id).execute();
      expect(await s.db.selectFrom('call_figure_rows').select('call_id').where('call_id', '=', one.call_id).execute()).toEqual([]);
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));
    });
  });

  // `callsync copy` writes PostgreSQL only. The target already has the source's tolerance (a
  // database in use does): the copied setting then changes nothing, and no refill by trigger hides
  // a batch of calls copied without its figures.
  it.runIf(dialect === 'postgres')('after callsync copy, the target holds the view figures of every call', async () => {
    const source = join(tmp.dir, 'copy-source.db');
    expect((await syncWith(testSettings(sim, ['app1'], source))).ok).toBe(true);
    const tolerance = await withStore(source, async (s) => (await s.db.selectFrom('callsync_settings').select('value').where('key', '=', 'reconcile_tolerance_minutes').executeTakeFirst())?.value);
    const target = await dbs.fresh('figures-copy');
    await withStore(target, async (s) => {
      await migrateToLatest(s.db);
      if (tolerance !== undefined) await saveTolerance(s.db, Number(tolerance));
    });
    const res = await runCli(['copy', '--from', source, '--to', target]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    await withStore(target, async (s) => {
      const got = await fromTable(s.db);
      expect(got.length).toBe(sim.truth('app1').calls.size);
      expect(got).toEqual(await fromView(s.db));
    });
  });

  it('issue_bits has bit i set exactly when issues lists the i-th code', async () => {
    await withStore(db, async (s) => {
      const rows = await sql<{ issues: string; issue_bits: number | string }>`select issues, issue_bits from call_reconciliation`.execute(s.db);
      expect(rows.rows.some((r) => r.issues !== '')).toBe(true);
      for (const r of rows.rows) {
        const bits = Number(r.issue_bits);
        expect(ISSUE_CODES.filter((_, i) => Math.floor(bits / 2 ** i) % 2 === 1).join(',')).toBe(r.issues);
      }
    });
  });

  it('a database migrated from before the table gets it filled, and loses it going back down', async () => {
    await withStore(db, async (s) => {
      const want = await fromTable(s.db);
      const migrator = new Migrator({ db: s.db, provider: migrationProvider(s.db) });
      // Down to the trigger-kept table keyed by the text key, the calls' figures in it.
      expect((await migrator.migrateTo(BEFORE_CALL_ID)).error).toBeUndefined();
      const tables = await s.db.introspection.getTables();
      expect(tables.find((t) => t.name === 'call_figures')?.isView).toBe(false);
      expect(tables.map((t) => t.name)).not.toContain('call_figure_rows');
      const old = canon((await sql<Row>`select * from call_figures`.execute(s.db)).rows);
      expect(old).toEqual(canon((await sql<Row>`select app_id, session_id, region, coalesce(type, '(none)') as type, started_at, is_final, relation, flagged, issue_bits,
          participant_audio_minutes, participant_video_minutes, participant_total_minutes,
          coalesce(total_audio_minutes, 0) as call_audio_minutes, coalesce(total_video_minutes, 0) as call_video_minutes,
          coalesce(total_duration_minutes, 0) as call_total_minutes, recording_minutes,
          abs(audio_delta_minutes) + abs(video_delta_minutes) as mismatch_size from call_reconciliation`.execute(s.db)).rows));
      expect(old.length).toBe(want.length);

      const down = await migrator.migrateTo(BEFORE_FIGURES);
      expect(down.error).toBeUndefined();
      expect((await s.db.introspection.getTables()).map((t) => t.name)).not.toContain('call_figures');
      // A call written while nothing kept the figures: the migration's fill must still see it.
      await sql`update calls set participant_total_minutes = participant_total_minutes + 1000000 where session_id = (select min(session_id) from calls)`.execute(s.db);
      await migrateToLatest(s.db);
      const got = await fromTable(s.db);
      expect(got.length).toBe(want.length);
      expect(got).not.toEqual(want);
      expect(got).toEqual(await fromView(s.db));
    });
  });
});
