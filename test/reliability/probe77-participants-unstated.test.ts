import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { KEY_ENV, syncWith, tempDir, TEST_KEY, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeCall, type Wire } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { callsVsTruth } from './support/stored-vs-truth.js';

/**
 * probe77 F1: List Calls entries carrying the call's id, kind, status and times only (no
 * participants, no minutes), and a Get Call view that leaves `participants` out. Nothing the
 * service sent says who took part, while each answer counts them (`totalParticipants`) and their
 * minutes: every call was stored with no participant rows, and `callsync sync` said ok, exit 0,
 * on the first run and every run after. Such a call lacks details now (partial, one line).
 */
const tmp = tempDir('probe77-unstated-');
afterAll(() => tmp.cleanup());

describe('a call whose participants nothing states', () => {
  it('is not stored as a call without participants: the run is partial, exit 1, one line', async () => {
    const service = await FakeCallsService.start({ seed: 771, calls: 30, ongoing: 0, spanHours: 24, listMinimal: true, getOmits: ['participants'] });
    try {
      const database = join(tmp.dir, 'unstated.db');
      const config = join(tmp.dir, 'unstated.json');
      writeFileSync(config, JSON.stringify({ database, apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 'unlimited', ...service.baseUrls('app1') }] }));
      for (const night of [1, 2]) {
        const r = await runCli(['sync', '--config', config], { [KEY_ENV]: TEST_KEY });
        const wrong = await callsVsTruth(service, database);
        // Exact, or loud: never exit 0 with calls stored without their participants.
        expect(wrong.filter((w) => w.includes('participants')).length, `night ${night}`).toBeGreaterThan(0);
        expect(r.code, `night ${night}: ${r.stdout}${r.stderr}`).toBe(1);
        expect(r.stderr + r.stdout).toMatch(/30 call\(s\)[^\n]*lack details/);
      }
      // The calls are kept as listed, said why, and asked for again.
      const kept = await withStore(database, ({ db }) => db.selectFrom('calls').select(['detail_error']).execute());
      expect(kept.length).toBe(30);
      expect(kept.every((c) => /states the participants/.test(c.detail_error ?? ''))).toBe(true);

      // Once Get Call states them, the next run stores them: exact, ok.
      service.opts.getOmits = [];
      const r = await runCli(['sync', '--config', config], { [KEY_ENV]: TEST_KEY });
      expect(r.code, r.stderr).toBe(0);
      expect(await callsVsTruth(service, database)).toEqual([]);
    } finally {
      await service.close();
    }
  });

  it('nor when Get Call answers the list entry itself, counting participants it does not name', async () => {
    // The same text from both endpoints (the detail fetch's "as listed" path): who took part is not said anywhere.
    const bare = (_: Wire, c: FakeCall): Wire => ({ sessionId: c.sessionId, type: c.type, mode: c.mode, status: c.status, receiverType: c.receiverType, receiver: c.receiver, initiator: c.initiator, initiatedAt: c.initiatedAt, startedAt: c.startedAt, endedAt: c.endedAt, totalParticipants: c.participants.length, totalAudioMinutes: c.totalAudioMinutes, totalVideoMinutes: c.totalVideoMinutes });
    const service = await FakeCallsService.start({ seed: 772, calls: 20, ongoing: 0, spanHours: 24, listEntry: bare, getAnswer: bare });
    try {
      const database = join(tmp.dir, 'as-listed.db');
      const r = (await syncWith(settingsAt(service.baseUrls('app1'), database))).results[0]!;
      expect(r.status).toBe('partial');
      expect(r.failedCalls).toBe(20);
      expect(r.error).toMatch(/20 call\(s\)[^\n]*lack details/);
    } finally {
      await service.close();
    }
  });
});
