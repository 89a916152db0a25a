import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Settings } from '../../src/config/load.js';
import type { Simulator, TruthCall } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/connection.js';
import { systemClock } from '../../src/config/clock.js';
import { isFinalStatus } from '../../src/transform/call-status.js';
import { verifyApps, type VerifyReport } from '../../src/verify/run-verify.js';
import type { VerifyWindow } from '../../src/verify/stored-state.js';
import { runCli } from '../helpers/cli.js';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { KEY_ENV, startTestSim, syncWith, tempDir, TEST_KEY, testConfig, testSettings, withStore } from '../helpers/harness.js';
import { expectOnlyUnreadCalls } from '../helpers/unread.js';
import { diffAgainstTruth } from '../helpers/truth-diff.js';

const dialects = await testDialects();
const DAY = 86_400;
const FAKE_LIVE = 'verify-test-fake-live-call';

/** verify in this process, with the real client, a real Agent and the real database. */
async function verifyInProcess(settings: Settings, window: VerifyWindow = {}): Promise<VerifyReport> {
  const store = await openStore(settings.database);
  const dispatcher = new Agent({ connections: settings.concurrency + 2 });
  try {
    return await verifyApps({ db: store.db, dispatcher, clock: systemClock }, settings, settings.apps, window);
  } finally {
    await dispatcher.close();
    await store.close();
  }
}

function timeOf(c: TruthCall): number | null {
  return c.startedAt ?? c.initiatedAt ?? c.endedAt;
}

async function watermark(db: string): Promise<number | null | undefined> {
  return withStore(db, async (s) => (await s.db.selectFrom('sync_state').select('watermark_started_at').where('app_id', '=', 'app1').executeTakeFirst())?.watermark_started_at);
}

describe.each(dialects)('callsync verify [%s]', (dialect) => {
  let sim: Simulator;
  const tmp = tempDir();
  const dbs = databaseFactory(dialect, tmp.dir);
  let db: string;
  let cfg: string;
  let settings: Settings;
  const env = { [KEY_ENV]: TEST_KEY };
  /** What the test did to the database and the service, and so what verify must find. */
  const broken = { lost: '', altered: '', ended: [] as string[], added: [] as string[] };

  beforeAll(async () => {
    sim = await startTestSim([{ calls: 600 }], { malformedCalls: 2, notFoundCalls: 2 });
    db = await dbs.fresh('verify');
    cfg = join(tmp.dir, 'verify.json');
    writeFileSync(cfg, JSON.stringify(testConfig(sim, ['app1'], db)));
    settings = testSettings(sim, ['app1'], db);
  });
  afterAll(async () => {
    await sim.close();
    await dbs.dropAll();
    tmp.cleanup();
  });

  it('after a sync finds nothing missing, changed or extra, reports rejected entries apart, and exits 0 (CLI, JSON)', async () => {
    // The 2 calls the simulator serves unreadably make the sync partial; verify shows them apart.
    expectOnlyUnreadCalls((await syncWith(settings)).results[0]!, 2);
    const res = await runCli(['verify', '--config', cfg, '--format', 'json'], env);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { ok: boolean; apps: Record<string, unknown>[] };
    expect(Object.keys(out).sort()).toEqual(['apps', 'ok']);
    expect(out.ok).toBe(true);
    expect(out.apps).toHaveLength(1);
    const app = out.apps[0]!;
    for (const k of ['appId', 'region', 'listed', 'stored', 'missing', 'changed', 'extra', 'rejected']) expect(app).toHaveProperty(k);
    expect(app).toMatchObject({ appId: 'app1', region: 'us', missing: [], changed: [], extra: [], listingComplete: true });
    // The malformed entries are listed, cannot be stored, and sit in rejected_records: reported, not failed.
    expect(app.rejected).toEqual([...sim.truth('app1').malformed].sort());
    expect(app.stored).toBe(sim.truth('app1').calls.size);
    expect(app.listed).toBe((app.stored as number) + (app.rejected as string[]).length);
  });

  it('finds a lost call, a changed call, calls the service ended or added since, and a stored live call no longer listed', async () => {
    const truth = sim.truth('app1');
    // Two final calls of one UTC day from the middle of the history (for the window check below).
    const byDay = new Map<number, TruthCall[]>();
    for (const c of truth.calls.values()) {
      if (c.status === null || !isFinalStatus(c.status) || c.status === 'busy' || timeOf(c) === null || truth.notFound.has(c.sessionId)) continue;
      const d = Math.floor(timeOf(c)! / DAY);
      (byDay.get(d) ?? byDay.set(d, []).get(d)!).push(c);
    }
    const days = [...byDay.keys()].sort((a, b) => a - b).filter((d) => byDay.get(d)!.length >= 2);
    const [lost, altered] = byDay.get(days[Math.floor(days.length / 2)]!)! as [TruthCall, TruthCall];
    await withStore(db, async (s) => {
      await s.db.transaction().execute(async (trx) => {
        // A lost call: its rows are gone (as after a restore from an older backup).
        await trx
          .deleteFrom('call_participant_rows')
          .where('call_id', 'in', (eb) => eb.selectFrom('calls').select('call_id').where('app_id', '=', 'app1').where('session_id', '=', lost.sessionId))
          .execute();
        await trx.deleteFrom('call_recordings').where('app_id', '=', 'app1').where('session_id', '=', lost.sessionId).execute();
        await trx.deleteFrom('calls').where('app_id', '=', 'app1').where('session_id', '=', lost.sessionId).execute();
        // A changed call: the stored status and minutes are not what the service says, and the
        // stored fingerprint is not the current entry's (as when the service changed it since).
        await trx
          .updateTable('calls')
          .set({ status: 'busy', total_audio_minutes: altered.totalAudioMinutes + 5, list_fingerprint: 'stale' })
          .where('app_id', '=', 'app1')
          .where('session_id', '=', altered.sessionId)
          .execute();
        // A call stored live that the service does not list (any more), timed inside that day.
        // A copy of a stored call under another key: without its call_id, which the database numbers.
        const { call_id: _callId, ...model } = await trx.selectFrom('calls').selectAll().where('app_id', '=', 'app1').where('session_id', '=', altered.sessionId).executeTakeFirstOrThrow();
        await trx
          .insertInto('calls')
          .values({ ...model, session_id: FAKE_LIVE, status: 'ongoing', is_final: 0, ended_at: null, not_found_at: null, list_fingerprint: null, started_at: timeOf(lost)! + 1 })
          .execute();
      });
    });
    const change = sim.advance('app1', { endOngoing: true, newCalls: 2 });
    expect(change.added).toHaveLength(2);
    expect(change.ended.length).toBeGreaterThan(0);
    Object.assign(broken, { lost: lost.sessionId, altered: altered.sessionId, ended: change.ended, added: change.added });

    const all = (await verifyInProcess(settings)).apps[0]!;
    expect(all.listingComplete).toBe(true);
    expect(all.missing).toEqual([lost.sessionId, ...change.added].sort());
    expect(all.changed).toEqual([altered.sessionId, ...change.ended].sort());
    expect(all.changedFields[altered.sessionId]).toEqual(expect.arrayContaining(['status', 'total_audio_minutes']));
    for (const id of change.ended) expect(all.changedFields[id]).toContain('status');
    expect(all.extra).toEqual([FAKE_LIVE]);
    expect(all.rejected).toEqual([...truth.malformed].sort());

    // The same over that one UTC day: only what lies in it, and the listing need not be read to its end.
    const since = Math.floor(timeOf(lost)! / DAY) * DAY;
    const inDay = (id: string): boolean => {
      const c = sim.truth('app1').calls.get(id);
      const t = c ? timeOf(c) : null;
      return t !== null && t >= since && t < since + DAY;
    };
    const day = (await verifyInProcess(settings, { since, until: since + DAY })).apps[0]!;
    expect(day.listingComplete, day.problem).toBe(true);
    expect(day.listing?.stoppedEarly).toBe(true);
    expect(day.missing).toEqual(all.missing.filter(inDay));
    expect(day.missing).toContain(lost.sessionId);
    expect(day.changed).toEqual(all.changed.filter(inDay));
    expect(day.changed).toContain(altered.sessionId);
    expect(day.extra).toEqual([FAKE_LIVE]);
    expect(day.listed).toBeLessThan(all.listed);
  });

  it('--repair brings the database to the truth, keeps the watermark, and exits by the second comparison (CLI, JSON)', async () => {
    const before = await watermark(db);
    expect(before).not.toBeNull();
    const res = await runCli(['verify', '--repair', '--config', cfg, '--format', 'json'], env);
    // The repair is a sync: its JSON log lines (the rejected entries, at warn) go to stderr, nothing else.
    expect(res.stderr.split('\n').filter((l) => l && !l.startsWith('{"level":'))).toEqual([]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as {
      ok: boolean;
      apps: { missing: string[]; changed: string[]; extra: string[] }[];
      before: { ok: boolean; apps: { missing: string[]; changed: string[]; extra: string[] }[] };
      repairs: { sync?: { status: string }; extras?: { notFound: number } }[];
    };
    expect(out.before.ok).toBe(false);
    expect(out.before.apps[0]).toMatchObject({
      missing: [broken.lost, ...broken.added].sort(),
      changed: [broken.altered, ...broken.ended].sort(),
      extra: [FAKE_LIVE],
    });
    // Partial for the 2 unreadable calls alone (rejected, shown apart by verify).
    expect(out.repairs[0]?.sync?.status).toBe('partial');
    expect(out.repairs[0]?.extras?.notFound).toBe(1);
    expect(out.ok).toBe(true);
    expect(out.apps[0]).toMatchObject({ missing: [], changed: [], extra: [] });

    // The fake live call is one the service does not have: kept, flagged not found.
    await withStore(db, async (s) => {
      expect(await diffAgainstTruth(s.db, sim.truth('app1'), { allowExtra: new Set([FAKE_LIVE]) })).toEqual([]);
      const fake = await s.db.selectFrom('calls').select('not_found_at').where('app_id', '=', 'app1').where('session_id', '=', FAKE_LIVE).executeTakeFirstOrThrow();
      expect(fake.not_found_at).not.toBeNull();
    });
    expect(await watermark(db)).toBe(before);

    const table = await runCli(['verify', '--config', cfg], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('OK: the database holds what the service lists');
  });

  it('refuses a bad date or an unknown app with one line and exit 2', async () => {
    for (const args of [['--since', '2025-13-01'], ['--until', 'last tuesday'], ['--since', '2025-02-30'], ['--app', 'nope']]) {
      const res = await runCli(['verify', '--config', cfg, ...args], env);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(res.stderr).toContain(args[0]);
    }
  });

  it('names the app and region in one line when the key is refused, never the key, and exits 1', async () => {
    const res = await runCli(['verify', '--config', cfg], { [KEY_ENV]: 'not-the-key-5e2a' });
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toContain('app1 (us)');
    expect(res.stderr).toMatch(/AUTH_ERR/);
    expect(res.stdout + res.stderr).not.toContain('not-the-key-5e2a');
  });

  it('says in one line that the listing could not be proved complete, and exits 1', async () => {
    const liar = await startTestSim([{ calls: 150 }], { lieTotalPages: 'high' });
    try {
      const liarDb = await dbs.fresh('liar');
      await syncWith(testSettings(liar, ['app1'], liarDb));
      const liarCfg = join(tmp.dir, 'liar.json');
      writeFileSync(liarCfg, JSON.stringify(testConfig(liar, ['app1'], liarDb)));
      const res = await runCli(['verify', '--config', liarCfg, '--format', 'json'], env);
      expect(res.code).toBe(1);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toContain('app1 (us)');
      expect(res.stderr).toContain('could not be proved complete');
      const out = JSON.parse(res.stdout) as { ok: boolean; apps: { listingComplete: boolean; problem: string }[] };
      expect(out.ok).toBe(false);
      expect(out.apps[0]?.listingComplete).toBe(false);
    } finally {
      await liar.close();
    }
  });
});
