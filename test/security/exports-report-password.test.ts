import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { freshDatabase, testDialects, type TestDatabase } from '../helpers/databases.js';
import { syncWith, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from '../reliability/support/fake-calls-service.js';
import { settingsAt } from '../reliability/support/matrix.js';

/**
 * Issue 13, point 2 (report): the HTML report names the database it was made from, and the page
 * travels by e-mail. A PostgreSQL URL with a password must appear masked. The local server trusts
 * every local connection, so any password is accepted: one is put in the URL on purpose.
 */
const PASSWORD = 's3cret-xyz';
const NOW = Math.floor(Date.now() / 1000);
const DAY = 86_400;
const day = (t: number): string => new Date(t * 1000).toISOString().slice(0, 10);
const hasPostgres = (await testDialects()).includes('postgres');

describe.skipIf(!hasPostgres)('report on a PostgreSQL URL with a password', () => {
  const tmp = tempDir();
  let pg: TestDatabase;
  let url: string;
  let fake: FakeCallsService;

  beforeAll(async () => {
    pg = await freshDatabase('postgres', tmp.dir, 'report_password');
    const u = new URL(pg.url);
    u.password = PASSWORD;
    url = u.toString();
    fake = await FakeCallsService.start({ calls: 5, ongoing: 0, spanHours: 24 });
    const summary = await syncWith(settingsAt(fake.baseUrls('app1'), url));
    expect(['ok', 'partial']).toContain(summary.results[0]!.status);
  });
  afterAll(async () => {
    await fake?.close();
    await pg?.drop();
    tmp.cleanup();
  });

  it('the HTML names the database with its password masked, never the password', async () => {
    const out = `${tmp.dir}/report.html`;
    const r = await runCli(['report', '--database', url, '--from', day(NOW - 3 * DAY), '--to', day(NOW + 2 * DAY), '--out', out]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const page = readFileSync(out, 'utf8');
    expect(page).not.toContain(PASSWORD);
    const masked = new URL(url);
    masked.password = '***';
    // Both places that name the database (the header and the footer) show the masked URL.
    expect(page.split(masked.toString()).length - 1).toBe(2);
    expect(r.stdout).not.toContain(PASSWORD);
  });
});
