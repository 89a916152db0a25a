import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';
import { KEY_ENV, syncWith, TEST_KEY, withStore } from '../helpers/harness.js';
import { detailsChangeSetting, OLD_AUDITS, SETTLE_AUDITS } from '../../src/sync/settle-audit.js';
import { FakeCallsService, type FakeCall, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * Details that change after Get Call gave them, when nothing else tells (probe round 8, F7): a
 * service answering provisional minutes the night a call ends and the final ones later, its list
 * entries (id, kind, status, times: no minutes) unchanged. Only answers that look unfinished (a
 * participant at zero minutes, recordings missing) were asked for again, so the provisional minutes
 * stayed for good, every run ok. Each run now asks again for a few calls fetched on an earlier run
 * and compares; a difference makes every run ask for every fetched call of the last settleDays.
 */
const SETTINGS = { pageSize: 50, detailFetch: 'auto', lookbackHours: 24, concurrency: 4, maxAttempts: 2, requestTimeoutMs: 2_000 } as const;

/** The service revises a call's minutes (its list entry, which carries none, stays the same). */
function revise(c: FakeCall, factor: number): void {
  for (const p of c.participants) {
    p.totalAudioMinutes *= factor;
    p.totalVideoMinutes *= factor;
    p.totalDuration *= factor;
  }
  const sum = (k: 'totalAudioMinutes' | 'totalVideoMinutes'): number => c.participants.reduce((s, p) => s + p[k], 0);
  Object.assign(c, { totalAudioMinutes: sum('totalAudioMinutes'), totalVideoMinutes: sum('totalVideoMinutes'), totalDurationInMinutes: sum('totalAudioMinutes') + sum('totalVideoMinutes') });
}

/** Calls whose stored minutes (the call's, and its participants' sum) differ from the service's. */
async function minutesOff(database: string, service: FakeCallsService): Promise<string[]> {
  const calls = await withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'total_audio_minutes', 'total_video_minutes', 'participant_total_minutes']).execute());
  const stored = new Map(calls.map((r) => [r.session_id, r]));
  const off = (a: number | null | undefined, b: number): boolean => Math.abs((a ?? NaN) - b) > 1e-9;
  return service.calls
    .filter((c) => {
      const s = stored.get(c.sessionId);
      return !s || off(s.total_audio_minutes, c.totalAudioMinutes as number) || off(s.total_video_minutes, c.totalVideoMinutes as number) || off(s.participant_total_minutes, c.participants.reduce((t, p) => t + p.totalDuration, 0));
    })
    .map((c) => c.sessionId);
}

/** A night passes: what is stored was written two hours ago (the audit leaves what a run wrote within the hour alone). */
async function nightPasses(database: string): Promise<void> {
  await withStore(database, ({ db }) => sql`update calls set synced_at = synced_at - 7200`.execute(db));
}

async function remembered(database: string): Promise<string | undefined> {
  const row = await withStore(database, ({ db }) => db.selectFrom('callsync_settings').select('value').where('key', '=', detailsChangeSetting('app1', 'us')).executeTakeFirst());
  return row?.value;
}

/** `callsync sync` as a user runs it; returns its stdout and stderr. */
async function cliSync(service: FakeCallsService, database: string, dir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(['sync', '--config', writeConfig(service, database, dir)], { [KEY_ENV]: TEST_KEY });
}

/** The config a user would write for `service` and `database`; returns its path. */
function writeConfig(service: FakeCallsService, database: string, dir: string): string {
  const config = join(dir, 'callsync.json');
  writeFileSync(config, JSON.stringify({ database, ...SETTINGS, liveMaxDays: 3650, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...service.baseUrls('app1') }] }));
  return config;
}

async function start(seed: number, getAnswer?: (a: Wire, c: FakeCall) => Wire, spanHours = 24): Promise<FakeCallsService> {
  // Minimal entries: every call is fetched with Get Call; all ended within the last day (settleDays 3).
  return FakeCallsService.start({ seed, calls: 60, ongoing: 0, listMinimal: true, spanHours, ...(getAnswer ? { getAnswer } : {}) });
}

describe.each(await testDialects())('details that change after Get Call gave them, the list entry unchanged [%s]', (dialect) => {
  test.override({ dialect });

  it('a later run finds it by asking again, and ends with the service’s minutes for every call: ok, said once', async ({ database, dir }) => {
    const service = await start(81);
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      const first = (await syncWith(settings)).results[0]!;
      expect(first.status, first.error).toBe('ok');
      expect(await minutesOff(database, service)).toEqual([]);

      // The next day the service states final minutes for every call that had minutes (the others,
      // never answered, have none to revise): with more than 40 of the 60 revised, a sample of
      // SETTLE_AUDITS misses all of them at most 3 times in 100,000 runs (C(19,8) / C(60,8)).
      const revised = service.calls.filter((c) => c.participants.some((p) => p.totalDuration > 0));
      expect(revised.length).toBeGreaterThan(40);
      for (const c of revised) revise(c, 1.5);
      expect((await minutesOff(database, service)).length).toBe(revised.length);
      await nightPasses(database);
      const asked = service.getIds.length;

      const second = await cliSync(service, database, dir);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/\bok\b/);
      expect(second.stderr).toContain('details of calls change after Get Call gave them');
      expect(await minutesOff(database, service)).toEqual([]);
      expect(await remembered(database)).toMatch(/Get Call answered other details than an earlier run stored/);
      // The sample, then the rest of the window: each call once.
      const gets = service.getIds.slice(asked);
      expect(new Set(gets).size).toBe(gets.length);
      expect(gets.length).toBe(service.calls.length);

      // Remembered: a later revision of any one call is read on the next run, whatever the sample.
      const one = revised[0]!;
      revise(one, 2);
      await nightPasses(database);
      const third = await cliSync(service, database, dir);
      expect(third.code, third.stderr).toBe(0);
      expect(third.stderr).not.toContain('details of calls change');
      expect(await minutesOff(database, service)).toEqual([]);
    } finally {
      await service.close();
    }
  });

  it('details that do not change: a run at once asks for none again, a run the next day for a sample (counted by the dry run), and writes nothing', async ({ database, dir }) => {
    const service = await start(82);
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      let asked = service.getIds.length;
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      expect(service.getIds.length - asked).toBe(0);

      await nightPasses(database);
      const dry = await runCli(['sync', '--dry-run', '--json', '--config', writeConfig(service, database, dir)], { [KEY_ENV]: TEST_KEY });
      expect(JSON.parse(dry.stdout.split('\n').find((l) => l.startsWith('{'))!)).toMatchObject({ status: 'ok', getCalls: 0, followUpGetCalls: SETTLE_AUDITS });
      const before = await withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'synced_at']).orderBy('session_id').execute());
      asked = service.getIds.length;
      const next = (await syncWith(settings)).results[0]!;
      expect(next.status, next.error).toBe('ok');
      expect(service.getIds.length - asked).toBe(SETTLE_AUDITS);
      // Answers stating nothing new are not written.
      expect(await withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'synced_at']).orderBy('session_id').execute())).toEqual(before);
      expect(await remembered(database)).toBeUndefined();
      expect(await minutesOff(database, service)).toEqual([]);
    } finally {
      await service.close();
    }
  });
  // Probe round 10 (F2, F3): the answer that carried the change left out what the first one had
  // (participants), and it was stored as it came: the participants deleted, ok. Round 12 (F4): kept
  // under the new call minutes, they were stale participant minutes, ok. Now the stored rows stay and
  // the run is partial until an answer states the participants; other fields that changed alone
  // (tags) are written.
  it('a changed answer that leaves participants out: the stored participants are kept, the run is partial until they are stated; tags alone are written', async ({ database, dir }) => {
    let night = 1;
    const service = await start(83, (a) => (night === 2 ? (({ participants: _p, ...rest }) => rest)(a) : a));
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      const participantRows = async (): Promise<number> => Number((await withStore(database, ({ db }) => db.selectFrom('call_participants').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow())).n);
      const before = await participantRows();
      expect(before).toBeGreaterThan(100);
      night = 2;
      for (const c of service.calls) Object.assign(c, { totalAudioMinutes: (c.totalAudioMinutes as number) + 1 });
      await nightPasses(database);
      const second = await cliSync(service, database, dir);
      expect(second.code).not.toBe(0);
      // The sample's answers differ in a way they leave unstated: a finding, so every call of the window is asked.
      expect(second.stdout + second.stderr).toContain(`${service.calls.length} call(s) asked for again lack details`);
      expect(await participantRows()).toBe(before);
      night = 3;
      const third = (await syncWith(settings)).results[0]!;
      expect(third.status, third.error).toBe('ok');
      expect(await minutesOff(database, service)).toEqual([]);

      for (const c of service.calls) c.tags = ['revised'];
      await nightPasses(database);
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      const tagged = await withStore(database, ({ db }) => db.selectFrom('calls').select('session_id').where('tags_json', '=', '["revised"]').execute());
      expect(tagged.length).toBeGreaterThanOrEqual(SETTLE_AUDITS);
    } finally {
      await service.close();
    }
  });
  // Probe round 10 (F7): an audited call whose answer was unusable was reported "stored as listed",
  // though it has no list entry in the run: what an earlier run stored of it stays.
  it('an audited call whose answer does not parse: partial, said as kept (not as listed), its stored rows unchanged; the next run clears it', async ({ database, dir }) => {
    let night = 1;
    const service = await start(85, (a) => (night === 2 ? { ...a, status: 7 } : a));
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      await nightPasses(database);
      const stored = async (): Promise<unknown[]> => withStore(database, ({ db }) => db.selectFrom('calls').select(['session_id', 'total_audio_minutes', 'participant_total_minutes', 'details_source', 'detail_error', 'synced_at']).orderBy('session_id').execute());
      const before = await stored();
      night = 2;
      const second = await cliSync(service, database, dir);
      expect(second.code).not.toBe(0);
      expect(second.stderr + second.stdout).toContain(`${SETTLE_AUDITS} call(s) asked for again lack details: Get Call gave nothing usable this time, so what earlier runs stored of them is kept`);
      expect(second.stderr + second.stdout).not.toContain('stored as listed');
      expect(await stored()).toEqual(before);
      night = 3;
      const third = (await syncWith(settings)).results[0]!;
      expect(third.status, third.error).toBe('ok');
      expect(await minutesOff(database, service)).toEqual([]);
    } finally {
      await service.close();
    }
  });
  // Probe round 11 (F3): minutes corrected after settleDays, the entries (no minutes) unchanged: no
  // run asked for such calls again, `sync --full` and `verify` ok with 35 of 80 calls wrong.
  it('calls older than the settle window: a sample of them asked again each run; a change makes the run partial, naming the repair', async ({ database, dir }) => {
    const service = await start(86, undefined, 24 * 10);
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      await nightPasses(database);
      let asked = service.getIds.length;
      const quiet = (await syncWith(settings)).results[0]!;
      expect(quiet.status, quiet.error).toBe('ok');
      expect(service.getIds.length - asked).toBe(SETTLE_AUDITS + OLD_AUDITS);

      // Every call that ended before the settle window (settleDays 3) gets another minute: whichever
      // the sample draws, it differs.
      const cutoff = Math.floor(Date.now() / 1000) - 3 * 86_400;
      const old = service.calls.filter((c) => (c.endedAt ?? c.startedAt ?? c.initiatedAt) < cutoff);
      expect(old.length).toBeGreaterThan(10);
      for (const c of old) c.totalAudioMinutes = (c.totalAudioMinutes as number) + 1;
      await nightPasses(database);
      asked = service.getIds.length;
      const found = await cliSync(service, database, dir);
      expect(found.code).not.toBe(0);
      expect(found.stdout + found.stderr).toContain('details of a call that ended more than settleDays (3) ago changed at the service, its list entry unchanged (call ');
      expect(found.stdout + found.stderr).toMatch(/callsync sync --refetch --since <first day that matters> --until \d{4}-\d{2}-\d{2}/);
      // The sampled old calls are written; the rest stay stale until the repair.
      const wrong = await minutesOff(database, service);
      expect(wrong.length).toBeLessThan(old.length);
      expect(wrong.length).toBeGreaterThanOrEqual(old.length - OLD_AUDITS);
      // The finding does not make the window's calls be asked for again (that is for changes within it).
      expect(await remembered(database)).toBeUndefined();

      const repair = await runCli(['sync', '--refetch', '--since', '2000-01-01', '--until', new Date(Date.now() + 86_400_000).toISOString().slice(0, 10), '--config', writeConfig(service, database, dir)], { [KEY_ENV]: TEST_KEY });
      expect(repair.code, repair.stderr).toBe(0);
      expect(await minutesOff(database, service)).toEqual([]);
    } finally {
      await service.close();
    }
  });
  it('a change of tags alone: written for the calls audited, not a finding (no call asked again for it)', async ({ database }) => {
    const service = await start(84);
    try {
      const settings = settingsAt(service.baseUrls('app1'), database, SETTINGS);
      expect((await syncWith(settings)).results[0]!.status).toBe('ok');
      for (const c of service.calls) c.tags = ['retagged'];
      await nightPasses(database);
      const next = (await syncWith(settings)).results[0]!;
      expect(next.status, next.error).toBe('ok');
      const tagged = await withStore(database, ({ db }) => db.selectFrom('calls').select('session_id').where('tags_json', '=', '["retagged"]').execute());
      expect(tagged.length).toBe(SETTLE_AUDITS);
      expect(await remembered(database)).toBeUndefined();
    } finally {
      await service.close();
    }
  });
});
