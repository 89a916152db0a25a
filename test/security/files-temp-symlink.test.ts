import { lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { syncWith, tempDir } from '../helpers/harness.js';
import { FakeCallsService } from '../reliability/support/fake-calls-service.js';
import { settingsAt } from '../reliability/support/matrix.js';

/**
 * Issue 13, point 10: exports and reports were written to `<out>.<pid>.tmp`, then renamed. Process
 * ids are handed out in order, so another local user could plant symlinks at the next few
 * hundred such names, pointing at a file of the victim's, and the export would be written through
 * the link into that file. Here the links are planted the same way before each real CLI run.
 */
const NOW = Math.floor(Date.now() / 1000);
const DAY = 86_400;
const day = (t: number): string => new Date(t * 1000).toISOString().slice(0, 10);
const PERIOD = ['--from', day(NOW - 8 * DAY), '--to', day(NOW + 2 * DAY)];
/** How many of the next process ids get a link: room for other processes started meanwhile. */
const PIDS_AHEAD = 3000;
const VICTIM_TEXT = 'the victim file, untouched\n';

/** Links `<out>.<pid>.tmp` → victim for the next PIDS_AHEAD process ids. */
function plantLinks(out: string, victim: string): void {
  const last = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'));
  for (let pid = last + 1; pid <= last + PIDS_AHEAD; pid++) symlinkSync(victim, `${out}.${pid}.tmp`);
}

describe.skipIf(process.platform !== 'linux')('export and report temp files do not follow a planted symlink', () => {
  const tmp = tempDir();
  const db = join(tmp.dir, 'calls.db');
  let fake: FakeCallsService;

  beforeAll(async () => {
    fake = await FakeCallsService.start({ calls: 20, ongoing: 0, spanHours: 72 });
    const summary = await syncWith(settingsAt(fake.baseUrls('app1'), db));
    expect(['ok', 'partial']).toContain(summary.results[0]!.status);
  });
  afterAll(async () => {
    await fake.close();
    tmp.cleanup();
  });

  it.each([
    ['export billing', (out: string) => ['export', 'billing', '--database', db, ...PERIOD, '--out', out]],
    ['report', (out: string) => ['report', '--database', db, ...PERIOD, '--out', out]],
  ])('%s', async (name, args) => {
    const dir = join(tmp.dir, name.replace(/\W/g, '-'));
    const out = join(dir, 'out.file');
    const victim = join(tmp.dir, `${name.replace(/\W/g, '-')}-victim.txt`);
    mkdirSync(dir);
    writeFileSync(victim, VICTIM_TEXT);
    plantLinks(out, victim);
    const r = await runCli(args(out));
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
    // The output is a file of its own, not the planted link moved into place.
    expect(lstatSync(out).isSymbolicLink()).toBe(false);
    expect(readFileSync(out, 'utf8').length).toBeGreaterThan(100);
    // No temp file of ours is left behind next to the links.
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp') && !lstatSync(join(dir, f)).isSymbolicLink())).toEqual([]);
  });
});
