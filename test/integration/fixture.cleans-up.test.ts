import { existsSync, readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { openStore } from '../../src/store/connection.js';
import { pgExec, testDialects } from '../helpers/databases.js';
import { it, test } from '../helpers/fixture.js';

/** The shared fixture (test/helpers/fixture.ts) hands out what it says and removes it even after a failure. */
describe.each(await testDialects())('the test fixture [%s]', (dialect) => {
  test.override({ dialect, simApps: [{ appId: 'a', calls: 5 }, { calls: 7 }], simFaults: { notFoundCalls: 1 } });
  const left: { dir?: string; database?: string; simUrl?: string } = {};

  it('gives the describe\'s simulator, a database of its dialect and a config naming both', async ({ sim, database, writeConfig, dir }) => {
    expect(sim.truth('a').calls.size).toBe(5);
    expect(sim.truth('app2').calls.size).toBe(7);
    expect(sim.truth('a').notFound.size).toBe(1);
    expect(database.startsWith('postgres://')).toBe(dialect === 'postgres');
    const cfg = JSON.parse(readFileSync(writeConfig({ pageSize: 10 }), 'utf8')) as { database: string; pageSize: number; apps: { appId: string; callsBaseUrl: string }[] };
    expect(cfg.database).toBe(database);
    expect(cfg.pageSize).toBe(10);
    expect(cfg.apps.map((a) => a.appId)).toEqual(['a', 'app2']);
    expect(cfg.apps[0]!.callsBaseUrl.startsWith(sim.url)).toBe(true);
    expect(existsSync(dir)).toBe(true);
  });

  it.fails('a failing test that used them all', async ({ sim, database, dir }) => {
    Object.assign(left, { dir, database, simUrl: sim.url });
    await (await openStore(database)).close();
    throw new Error('this test fails on purpose');
  });

  it('after it: the folder is gone, the database dropped and the simulator closed', async () => {
    expect(left.dir).toBeDefined();
    expect(existsSync(left.dir!)).toBe(false);
    await expect(fetch(`${left.simUrl!}/v3/calls`)).rejects.toThrow();
    if (dialect === 'postgres') await expect(pgExec(left.database!, 'select 1')).rejects.toThrow(/does not exist/);
  });
});
