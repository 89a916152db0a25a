import { Migrator, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { migrateToLatest, migrationProvider } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/schema.js';
import { saveTolerance } from '../../src/store/settings-repo.js';
import { ISSUE_CODES } from '../../src/reconcile/issue-codes.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';

/**
 * Issue 16: `call_figures` holds, per call, what reconcile and billing read, as `call_reconciliation`
 * computes it; triggers keep it so. After a sync, a re-sync that changes calls, a change of the
 * tolerance, a deleted call, and a migration of a database that had calls before the table existed,
 * it is exactly the view's figures. And `issue_bits` says what `issues` says.
 */
const dialects = await testDialects();

const BEFORE_FIGURES = '20261123T040000_period_columns';

type Row = Record<string, unknown>;

/** The view's figures per call, as the table should hold them: rows as comparable text. */
async function fromView(db: Kysely<Database>): Promise<string[]> {
  const r = await sql<Row>`select app_id, session_id, region, coalesce(type, '(none)') as type, started_at, is_final, relation, flagged, issue_bits,
      participant_audio_minutes, participant_video_minutes, participant_total_minutes,
      coalesce(total_audio_minutes, 0) as call_audio_minutes, coalesce(total_video_minutes, 0) as call_video_minutes,
      coalesce(total_duration_minutes, 0) as call_total_minutes, recording_minutes,
      abs(audio_delta_minutes) + abs(video_delta_minutes) as mismatch_size
    from call_reconciliation`.execute(db);
  return canon(r.rows);
}

async function fromTable(db: Kysely<Database>): Promise<string[]> {
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

  it('after a sync and a re-sync that changes calls, holds the view figures of every call', async () => {
    const settings = testSettings(sim, ['app1'], db);
    expect((await syncWith(settings)).ok).toBe(true);
    await withStore(db, async (s) => {
      const want = await fromView(s.db);
      expect(want.length).toBe(Number((await s.db.selectFrom('calls').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n));
      expect(await fromTable(s.db)).toEqual(want);
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

  it('after a write outside the upsert, a tolerance change and a delete, still holds them', async () => {
    await withStore(db, async (s) => {
      const one = await s.db.selectFrom('calls').select(['app_id', 'session_id']).where('is_final', '=', 1).orderBy('session_id').executeTakeFirstOrThrow();
      await s.db.updateTable('calls').set({ type: null, total_audio_minutes: -3 }).where('session_id', '=', one.session_id).execute();
      const row = await s.db.selectFrom('call_figures').select(['type', 'flagged', 'call_audio_minutes']).where('session_id', '=', one.session_id).executeTakeFirstOrThrow();
      expect([row.type, Number(row.flagged), row.call_audio_minutes]).toEqual(['(none)', 1, -3]);
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));

      // A tolerance so wide that every final call matches its participants: relations change.
      const relations = async (): Promise<string[]> => (await s.db.selectFrom('call_figures').select('relation').distinct().orderBy('relation').execute()).map((r) => r.relation);
      expect(await relations()).toContain('mismatch');
      await saveTolerance(s.db, 100_000);
      expect(await relations()).not.toContain('mismatch');
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));
      await s.db.deleteFrom('callsync_settings').where('key', '=', 'reconcile_tolerance_minutes').execute();
      expect(await relations()).toContain('mismatch');
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));

      await s.db.deleteFrom('calls').where('session_id', '=', one.session_id).execute();
      expect(await s.db.selectFrom('call_figures').select('session_id').where('session_id', '=', one.session_id).execute()).toEqual([]);
      expect(await fromTable(s.db)).toEqual(await fromView(s.db));
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
      const down = await new Migrator({ db: s.db, provider: migrationProvider(s.db) }).migrateTo(BEFORE_FIGURES);
      expect(down.error).toBeUndefined();
      expect((await s.db.introspection.getTables()).map((t) => t.name)).not.toContain('call_figures');
      // A call written while there were no triggers: the migration's backfill must still see it.
      await sql`update calls set participant_total_minutes = participant_total_minutes + 1000000 where session_id = (select min(session_id) from calls)`.execute(s.db);
      await migrateToLatest(s.db);
      const got = await fromTable(s.db);
      expect(got.length).toBe(want.length);
      expect(got).not.toEqual(want);
      expect(got).toEqual(await fromView(s.db));
    });
  });
});
