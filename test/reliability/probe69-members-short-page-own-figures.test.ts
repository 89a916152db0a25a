import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';

/**
 * List Group Members capped at 10 a page, each page stating its own figures (total = its rows,
 * total_pages 1), and a member hidden from page 2 (filtered after paging). A short page ends a
 * listing only when the reported figures agree with what was read; here the figures were already
 * below it (19 listed beside a total of 10, two pages read beside total_pages 1) and still taken
 * as agreeing: page 2 (9 members) ended every group, 19 of 37 and 19 of 48 stored, ok (a probe69
 * randomized fake).
 */
describe('probe69: a short member page beside figures the listing already exceeded', () => {
  const tmp = tempDir('callsync-probe69-members-');
  afterAll(() => tmp.cleanup());

  const cases: { name: string; members: FakeOptions['members'] }[] = [
    { name: 'a member hidden from page 2', members: { total: 'page', page2Short: true, cap: 10 } },
    { name: 'honest pages of 10, each with its own figures', members: { total: 'page', cap: 10 } },
  ];
  for (const c of cases) {
    it(`${c.name}: every member stored, or not ok`, async () => {
      const service = await FakeCallsService.start({ calls: 60, ongoing: 0, seed: 5120, spanHours: 30, groups: 2, members: c.members });
      try {
        const database = join(tmp.dir, `${c.name.length}.db`);
        const r = (await syncWith(settingsAt(service.baseUrls('app1'), database, { detailFetch: 'always', pageSize: 50, concurrency: 4 }))).results[0]!;
        const stored = await withStore(database, ({ db }) => db.selectFrom('group_members').select(['guid', 'uid']).execute());
        const missing = [...service.members].flatMap(([guid, uids]) => uids.filter((u) => !stored.some((s) => s.guid === guid && s.uid === u)).map((u) => `${guid}/${u}`));
        if (r.status === 'ok') expect(missing).toEqual([]);
        else expect(r.error).toMatch(/^[^\n]*members of \d+ group\(s\) could not be synced completely/);
        if (c.members?.page2Short !== true) expect(r.status, r.error).toBe('ok');
      } finally {
        await service.close();
      }
    });
  }
});
