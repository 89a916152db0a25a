import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { settingsAt } from './support/matrix.js';
import { receiverCall, startReceiverTypeService } from './support/receiver-type-service.js';
import { viaProxy, type TestServer } from './support/servers.js';

/**
 * `receiverType` written in another case (`GROUP`, `Group`: an enum serialised by name). A call's
 * status is read whatever its case; whether a call went to a group was not: its group's members
 * were never listed, and the run said ok with every member missing (probe69).
 */
const APP = 'app1';
const NOW = Math.floor(Date.now() / 1000);

const MEMBERS: Record<string, string[]> = { 'g-upper': ['m1', 'm2', 'm3'], 'g-title': ['m4', 'm5'], 'g-plain': ['m6'] };


describe('probe69: receiverType in another case', () => {
  const tmp = tempDir('callsync-probe69-rtype-');
  let server: TestServer;
  const calls = [receiverCall('c-upper', NOW - 3_600, 'GROUP', 'g-upper'), receiverCall('c-title', NOW - 4_200, ' Group', 'g-title'), receiverCall('c-plain', NOW - 4_800, 'group', 'g-plain')];

  beforeAll(async () => {
    server = await startReceiverTypeService(calls, MEMBERS);
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  for (const detailFetch of ['auto', 'always'] as const) {
    it(`detailFetch ${detailFetch}: every group's members are synced, ok`, async () => {
      const db = join(tmp.dir, `${detailFetch}.db`);
      const r = (await syncWith(settingsAt(viaProxy(server.url, APP), db, { detailFetch, concurrency: 2 }))).results[0]!;
      const members = await withStore(db, ({ db: k }) => k.selectFrom('group_members').select(['guid', 'uid']).orderBy('guid').orderBy('uid').execute());
      const truth = Object.entries(MEMBERS).flatMap(([guid, uids]) => uids.map((uid) => ({ guid, uid }))).sort((a, b) => a.guid.localeCompare(b.guid) || a.uid.localeCompare(b.uid));
      if (r.status === 'ok') expect(members).toEqual(truth);
      expect(r.status, r.error).toBe('ok');
    });
  }
});
