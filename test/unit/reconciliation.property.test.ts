import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertCalls } from '../../src/store/calls-repo.js';
import { openSqliteStore, type Store } from '../../src/store/connection.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { CallRows } from '../../src/store/schema.js';
import { apiCallToRows, parseCall } from '../../src/transform/call-rows.js';
import { tempDir } from '../helpers/harness.js';

/**
 * Property: `call_reconciliation` classifies calls whose relation is known by construction exactly.
 * Calls are generated as API records, go through the real normaliser and the real store (upsertCalls
 * in a transaction, on a migrated SQLite file), and are read back from the view. Minutes are whole
 * seconds / 60, and every "differs" differs by at least 0.05 min, far from the 0.01 tolerance, so
 * the expectation never hangs on a rounding edge.
 */
type Relation = 'participant_sum' | 'wall_clock' | 'mismatch' | 'incomplete';

interface Generated {
  relation: Relation;
  raw: Record<string, unknown>;
  /** Whether `participant_count` must be among the issues. */
  countIssue: boolean;
}

const T = 1_764_000_000;
const MARGIN = 0.05;
const minutesOf = (seconds: number): number => seconds / 60;
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

const participantSeconds = fc.array(fc.record({ audio: fc.integer({ min: 0, max: 1800 }), video: fc.integer({ min: 0, max: 1800 }) }), { minLength: 1, maxLength: 5 });

const generated: fc.Arbitrary<Generated> = fc
  .record({
    relation: fc.constantFrom<Relation>('participant_sum', 'wall_clock', 'mismatch', 'incomplete'),
    parts: participantSeconds,
    duration: fc.integer({ min: 1, max: 7200 }),
    videoCall: fc.boolean(),
    /** For 'mismatch': how far the call-level audio is off, in seconds (never 0). */
    offSeconds: fc.integer({ min: 4, max: 600 }).chain((s) => fc.constantFrom(s, -s)),
    incompleteBy: fc.constantFrom('ongoing', 'initiated', 'no-totals'),
    extraParticipant: fc.boolean(),
  })
  .map((g) => {
    const parts = g.parts.map((p) => ({ audio: minutesOf(p.audio), video: g.videoCall ? minutesOf(p.video) : 0 }));
    const pa = sum(parts.map((p) => p.audio));
    const pv = sum(parts.map((p) => p.video));
    const wall = minutesOf(g.duration);
    let ca = pa;
    let cv = pv;
    let status = 'ended';
    if (g.relation === 'wall_clock') {
      ca = wall;
      cv = g.videoCall ? wall : 0;
    } else if (g.relation === 'mismatch') {
      ca = wall + minutesOf(g.offSeconds);
      cv = pv;
    } else if (g.relation === 'incomplete' && g.incompleteBy !== 'no-totals') status = g.incompleteBy;
    const raw: Record<string, unknown> = {
      sessionId: 'PLACEHOLDER', type: g.videoCall ? 'video' : 'audio', mode: 'call', receiverType: 'user', receiver: 'r', initiator: 'i', status,
      totalDurationInMinutes: ca + cv, totalDuration: null,
      totalParticipants: parts.length + (g.extraParticipant ? 1 : 0), hasRecording: false,
      startedAt: T, endedAt: T + g.duration,
      participants: parts.map((p, i) => ({ uid: `u${i}`, totalAudioMinutes: p.audio, totalVideoMinutes: p.video, totalDurationInMinutes: p.audio + p.video, deviceId: `d${i}`, isJoined: true, joinedAt: T, leftAt: T + g.duration, state: 'ended' })),
    };
    if (!(g.relation === 'incomplete' && g.incompleteBy === 'no-totals')) {
      raw.totalAudioMinutes = ca;
      raw.totalVideoMinutes = cv;
    }
    return { relation: g.relation, raw, countIssue: g.extraParticipant && status === 'ended', pa, pv, ca, cv, wall };
  })
  // Keep only calls whose relation is unambiguous: "equal" exactly, "differs" by a wide margin.
  .filter((g) => {
    const far = (a: number, b: number): boolean => Math.abs(a - b) >= MARGIN;
    const sumHolds = !far(g.ca, g.pa) && !far(g.cv, g.pv);
    const wallHolds = !far(g.ca, g.wall) && (Math.abs(g.cv) < 1e-12 || !far(g.cv, g.wall));
    if (g.relation === 'wall_clock') return far(g.ca, g.pa) || far(g.cv, g.pv);
    if (g.relation === 'mismatch') return !sumHolds && !wallHolds && far(g.ca, g.pa) && far(g.ca, g.wall);
    return true;
  })
  .map(({ relation, raw, countIssue }) => ({ relation, raw, countIssue }));

describe('call_reconciliation classifies generated calls with known relations exactly', () => {
  const tmp = tempDir('callsync-recon-prop-');
  let store: Store;
  let next = 0;
  beforeAll(async () => {
    store = openSqliteStore(join(tmp.dir, 'recon.db'));
    await migrateToLatest(store.db);
  });
  afterAll(async () => {
    await store.close();
    tmp.cleanup();
  });

  it('for every relation, through the normaliser and the store', async () => {
    const seen: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.array(generated, { minLength: 1, maxLength: 12 }), async (batch) => {
        const rows: CallRows[] = batch.map((g) => {
          const raw = { ...g.raw, sessionId: `prop-${next++}` };
          const parsed = parseCall(raw, 'k');
          if (!parsed.ok) throw new Error(`generated call rejected: ${parsed.reason}`);
          return apiCallToRows(parsed.call, raw, { appId: 'app', region: 'us', now: T, source: 'detail', listFingerprint: null });
        });
        await store.db.transaction().execute((trx) => upsertCalls(trx, rows));
        const ids = rows.map((r) => r.call.session_id);
        const got = await store.db.selectFrom('call_reconciliation').select(['session_id', 'relation', 'issues']).where('app_id', '=', 'app').where('session_id', 'in', ids).execute();
        const byId = new Map(got.map((r) => [r.session_id, r]));
        batch.forEach((g, i) => {
          const row = byId.get(ids[i]!);
          expect(row?.relation, JSON.stringify(g.raw)).toBe(g.relation);
          seen[g.relation] = (seen[g.relation] ?? 0) + 1;
          const issues = (row?.issues ?? '').split(',').filter(Boolean);
          expect(issues.includes('participant_count'), `${row?.issues}`).toBe(g.countIssue);
          expect(issues.includes('totals_ne_participants')).toBe(g.relation === 'mismatch');
        });
      }),
      { numRuns: 150 },
    );
    expect(Object.keys(seen).sort()).toEqual(['incomplete', 'mismatch', 'participant_sum', 'wall_clock']);
  });
});
