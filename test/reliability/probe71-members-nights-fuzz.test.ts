import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseFactory, testDialects } from '../helpers/databases.js';
import { syncWith, tempDir, withStore } from '../helpers/harness.js';
import { FakeCallsService, type FakeOptions } from './support/fake-calls-service.js';
import { settingsAt } from './support/matrix.js';
import { seededRandom } from './support/prng.js';

const postgres = (await testDialects()).includes('postgres');
const SEEDS = Number(process.env.PROBE71_SEEDS ?? 6);
const NIGHTS = 4;

/** Member listings the docs allow (page size, totals, page numbering), one drawn per seed. */
const LISTINGS: NonNullable<FakeOptions['members']>[] = [
  {},
  { cap: 10 },
  { cap: 15, total: 'omit' },
  { total: 0 },
  { pageBase: 0, total: 0 },
  { cap: 20, total: 'page' },
  { cap: 12, currentPage: 'omit', total: 'omit' },
  { cap: 25, perPage: 'requested' },
];

type Db = { name: string; url: string };

async function storedMembers(url: string): Promise<{ members: string[]; groups: string[] }> {
  return withStore(url, async ({ db }) => ({
    members: (await db.selectFrom('group_members').select(['guid', 'uid', 'scope']).execute()).map((r) => `${r.guid}/${r.uid}/${r.scope}`).sort(),
    groups: (await db.selectFrom('synced_groups').select(['guid', 'status', 'members']).execute()).map((r) => `${r.guid}:${r.status}:${Number(r.members)}`).sort(),
  }));
}

/**
 * A seeded multi-night fuzzer over group calls and membership changes: members leave and join,
 * groups empty, are deleted and come back, under member listings the docs allow. Every night each
 * destination must end exact (the stored members of every called group are the service's) or say
 * so, and SQLite and PostgreSQL must hold the same members after the same nights. Every group has
 * a call inside the window each night (the fake's clock does not move), so each is synced nightly.
 */
describe.runIf(postgres)('probe71: group members over nights, SQLite and PostgreSQL alike', () => {
  const tmp = tempDir('callsync-probe71-fuzz-');
  const dbs = databaseFactory('postgres', tmp.dir);
  afterAll(async () => {
    await dbs.dropAll();
    tmp.cleanup();
  });

  it(`${SEEDS} seeds × ${NIGHTS} nights: exact or loud on each destination, and the same rows on both`, async () => {
    const failures: string[] = [];
    for (let seed = 7100; seed < 7100 + SEEDS; seed++) {
      const rand = seededRandom(seed);
      const members = LISTINGS[seed % LISTINGS.length]!;
      const service = await FakeCallsService.start({ calls: 30, ongoing: 0, seed, spanHours: 20, groups: 4, members });
      const deleted = new Map<string, string[]>();
      try {
        const targets: Db[] = [{ name: 'sqlite', url: join(tmp.dir, `fuzz-${seed}.db`) }, { name: 'postgres', url: await dbs.fresh(`fuzz-${seed}`) }];
        for (let night = 0; night < NIGHTS; night++) {
          if (night > 0) {
            for (const [guid, uids] of [...service.members]) {
              const roll = rand();
              if (roll < 0.1) {
                deleted.set(guid, uids);
                service.members.delete(guid);
              } else if (roll < 0.18) uids.splice(0, uids.length);
              else {
                for (let k = Math.floor(rand() * 4); k > 0 && uids.length > 0; k--) uids.splice(Math.floor(rand() * uids.length), 1);
                for (let k = Math.floor(rand() * 4); k > 0; k--) uids.splice(Math.floor(rand() * (uids.length + 1)), 0, `${guid}-n${night}-${k}`);
              }
            }
            for (const [guid, uids] of [...deleted]) {
              if (rand() < 0.5) {
                service.members.set(guid, [...uids.slice(2), `${guid}-back-${night}`]);
                deleted.delete(guid);
              }
            }
            const guids = [...new Set(service.calls.filter((c) => c.receiverType === 'group').map((c) => c.receiver))];
            const call = service.addCall({ at: Math.floor(Date.now() / 1000) - 300, status: 'ended' });
            Object.assign(call, { receiverType: 'group', mode: 'meet', receiver: guids[Math.floor(rand() * guids.length)]! });
          }
          const called = [...new Set(service.calls.filter((c) => c.receiverType === 'group').map((c) => c.receiver))].sort();
          const truth = called.flatMap((g) => (service.members.get(g) ?? []).map((u) => `${g}/${u}/participant`)).sort();
          const seen: Record<string, { status: string; stored: Awaited<ReturnType<typeof storedMembers>> }> = {};
          for (const t of targets) {
            const settings = settingsAt(service.baseUrls('app1'), t.url, { detailFetch: 'auto', pageSize: 50, concurrency: 4, lookbackHours: 24 });
            const r = (await syncWith(settings)).results[0]!;
            const stored = await storedMembers(t.url);
            seen[t.name] = { status: r.status, stored };
            if (process.env.PROBE71_VERBOSE) console.log(seed, night, t.name, r.status, (r.error ?? '').slice(0, 160));
            const where = `seed ${seed} (${JSON.stringify(members)}) night ${night} ${t.name}`;
            if (r.status === 'ok') {
              if (JSON.stringify(stored.members) !== JSON.stringify(truth)) {
                const missing = truth.filter((m) => !stored.members.includes(m));
                const extra = stored.members.filter((m) => !truth.includes(m));
                failures.push(`${where}: ok with members wrong (missing ${missing.length}: ${missing.slice(0, 3).join(', ')}; extra ${extra.length}: ${extra.slice(0, 3).join(', ')})`);
              }
              const gone = called.filter((g) => !service.members.has(g));
              for (const g of gone) if (!stored.groups.some((s) => s.startsWith(`${g}:not_found:`))) failures.push(`${where}: ok but deleted group ${g} not marked not_found (${stored.groups.join(' ')})`);
            } else if (/\n/.test(r.error ?? '') || !r.error) failures.push(`${where}: ${r.status} without one clear line: ${r.error}`);
          }
          const [a, b] = [seen.sqlite!, seen.postgres!];
          if (a.status === 'ok' && b.status === 'ok' && (JSON.stringify(a.stored) !== JSON.stringify(b.stored))) {
            failures.push(`seed ${seed} night ${night}: SQLite and PostgreSQL differ (${a.stored.groups.join(' ')} | ${b.stored.groups.join(' ')})`);
          }
          if (a.status !== b.status) failures.push(`seed ${seed} night ${night}: statuses differ, SQLite ${a.status}, PostgreSQL ${b.status}`);
        }
      } finally {
        await service.close();
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);
});
