import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { startTestSim, syncWith, tempDir, testSettings, withStore } from '../helpers/harness.js';
import { expectOnlyUnreadCalls } from '../helpers/unread.js';

const dialects = await testDialects();

describe.each(dialects)('call_reconciliation classifies every call as the ground truth does [%s]', (dialect) => {
  let sim: Simulator;
  const tmp = tempDir();
  const dbs = databaseFactory(dialect, tmp.dir);
  let db: string;
  beforeAll(async () => {
    db = await dbs.fresh('rec');
    sim = await startTestSim([{ calls: 4000 }], { notFoundCalls: 8, malformedCalls: 3 });
    expectOnlyUnreadCalls((await syncWith(testSettings(sim, ['app1'], db))).results[0]!, 3);
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('finds every inconsistent call and flags no consistent one', async () => {
    const truth = sim.truth('app1');
    const rows = await withStore(db, (s) => s.db.selectFrom('call_reconciliation').select(['session_id', 'relation', 'issues']).where('app_id', '=', 'app1').execute());
    expect(rows.length).toBe(truth.calls.size);
    const byId = new Map(rows.map((r) => [r.session_id, r]));
    const counts: Record<string, number> = {};
    const wrong: string[] = [];
    for (const [id, t] of truth.calls) {
      const row = byId.get(id)!;
      // A call Get Call no longer finds is `incomplete` by definition: its totals cannot be checked.
      const notFound = truth.notFound.has(id);
      const relation = notFound ? 'incomplete' : t.relation;
      const issues = (notFound ? t.issues.filter((i) => i !== 'totals_ne_participants') : t.issues).join(',');
      counts[relation] = (counts[relation] ?? 0) + 1;
      if (row.relation !== relation || row.issues !== issues) wrong.push(`${id}: ${row.relation} [${row.issues}] vs truth ${relation} [${issues}]`);
    }
    expect(wrong).toEqual([]);
    // The dataset really exercises every relation.
    for (const rel of ['participant_sum', 'wall_clock', 'mismatch', 'incomplete']) expect(counts[rel] ?? 0).toBeGreaterThan(0);
    const issueKinds = new Set(rows.flatMap((r) => (r.issues ? r.issues.split(',') : [])));
    for (const code of ['audio_plus_video_ne_total', 'timer_ne_minutes', 'participant_count', 'participant_outside_call', 'negative_duration', 'totals_ne_participants']) {
      expect(issueKinds.has(code)).toBe(true);
    }
  });

  it('keeps the per-call aggregates equal to a fresh aggregation of the participant rows', async () => {
    const drift = await withStore(db, (s) =>
      sql<{ n: number }>`
        select count(*) as n from calls c
        left join (select app_id, session_id, count(*) as rows_, coalesce(sum(total_duration_minutes), 0) as total, sum(is_joined) as joined
                   from call_participants group by app_id, session_id) p
          on p.app_id = c.app_id and p.session_id = c.session_id
        where c.participant_rows <> coalesce(p.rows_, 0) or abs(c.participant_total_minutes - coalesce(p.total, 0)) > 1e-9
           or c.joined_devices <> coalesce(p.joined, 0)`.execute(s.db),
    );
    expect(drift.rows[0]!.n).toBe(0);
  });

  it('applies the configured tolerance', async () => {
    await withStore(db, async (s) => {
      const before = await s.db.selectFrom('call_reconciliation').select((eb) => eb.fn.countAll<number>().as('n')).where('relation', '=', 'mismatch').executeTakeFirstOrThrow();
      await s.db.updateTable('callsync_settings').set({ value: '100000' }).where('key', '=', 'reconcile_tolerance_minutes').execute();
      const loose = await s.db.selectFrom('call_reconciliation').select((eb) => eb.fn.countAll<number>().as('n')).where('relation', '=', 'mismatch').executeTakeFirstOrThrow();
      await s.db.updateTable('callsync_settings').set({ value: '0.01' }).where('key', '=', 'reconcile_tolerance_minutes').execute();
      expect(before.n).toBeGreaterThan(0);
      expect(loose.n).toBe(0);
    });
  });
});
