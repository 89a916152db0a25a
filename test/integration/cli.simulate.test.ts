import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { collect, runCli, spawnCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/harness.js';

/** `callsync simulate` as a newcomer uses it (issue 14): key and config printed, clock, busy port. */

/** Starts `simulate` and waits for its closing line; the caller kills it. */
async function startSimulate(args: string[], cwd: string): Promise<{ child: ChildProcess; out: () => string; done: Promise<CliResult> }> {
  const child = spawnCli(['simulate', ...args], {}, cwd);
  const done = collect(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!out.includes('Stop it with Ctrl-C.')) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`simulate did not start: ${out} ${(await done).stderr}`);
    }
    await delay(20);
  }
  return { child, out: () => out, done };
}

/** The JSON config the simulator printed: from the line "{" to the line "}". */
function snippet(out: string): string {
  const lines = out.split('\n');
  const from = lines.indexOf('{');
  const to = lines.indexOf('}', from);
  expect(from).toBeGreaterThanOrEqual(0);
  expect(to).toBeGreaterThan(from);
  return lines.slice(from, to + 1).join('\n');
}

describe('callsync simulate', () => {
  const tmp = tempDir('callsync-simulate-');
  afterAll(() => tmp.cleanup());

  it('prints the key, the export line and a config that syncs it ok', { timeout: 120_000 }, async () => {
    const sim = await startSimulate(['--port', '0', '--apps', 's1:us,s2:eu', '--calls', '300', '--now', '2026-10-15'], tmp.dir);
    try {
      const out = sim.out();
      expect(out).toContain('(its clock: 2026-10-15T00:00:00.000Z');
      expect(out).toContain("API key of every app (the simulator's own, not a secret): simulator-key");
      expect(out).toContain('  export CALLSYNC_SIM_API_KEY=simulator-key');
      const text = snippet(out);
      const config = JSON.parse(text) as { apps: { appId: string; region: string; apiKeyEnv: string; callsBaseUrl: string; chatBaseUrl: string }[] };
      expect(config.apps.map((a) => [a.appId, a.region, a.apiKeyEnv])).toEqual([
        ['s1', 'us', 'CALLSYNC_SIM_API_KEY'],
        ['s2', 'eu', 'CALLSYNC_SIM_API_KEY'],
      ]);
      expect(config.apps[1]!.chatBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/s2\.api-eu\/v3$/);
      // Pasted as it is into a config file: the sync is ok and holds every call, all ending by the clock.
      writeFileSync(join(tmp.dir, 'callsync.config.json'), text);
      const sync = await runCli(['sync'], { CALLSYNC_SIM_API_KEY: 'simulator-key' }, tmp.dir);
      expect(sync.code).toBe(0);
      expect(sync.stdout.match(/: ok \[full\]/g)).toHaveLength(2);
      const db = new SqliteDatabase(join(tmp.dir, 'data', 'callsync.db'), { readonly: true });
      try {
        const row = db.prepare('select count(*) as n, max(started_at) as newest from calls').get() as { n: number; newest: number };
        expect(row.n).toBe(600);
        expect(row.newest).toBeLessThanOrEqual(Date.UTC(2026, 9, 15) / 1000);
        expect(row.newest).toBeGreaterThan(Date.UTC(2026, 9, 14) / 1000);
      } finally {
        db.close();
      }
    } finally {
      sim.child.kill('SIGTERM');
      expect((await sim.done).code).toBe(0);
    }
  });

  it('without --now its clock is the current hour', { timeout: 60_000 }, async () => {
    const before = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const sim = await startSimulate(['--port', '0', '--calls', '10'], tmp.dir);
    const after = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    sim.child.kill('SIGTERM');
    await sim.done;
    const clock = /its clock: (\S+),/.exec(sim.out())?.[1];
    expect([new Date(before).toISOString(), new Date(after).toISOString()]).toContain(clock);
  });

  it('a busy port: one line naming it, exit 2', { timeout: 60_000 }, async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const r = await runCli(['simulate', '--port', String(port), '--calls', '10'], {}, tmp.dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`callsync: port ${port} is in use; pass --port N (0 picks a free one)\n`);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('refuses an invalid --now, --demo without a demo, and --demo with --calls: one line each, exit 2', { timeout: 180_000 }, async () => {
    for (const bad of ['2025-02-30', 'yesterday', '2026-13-01', '2026-11-01T25:00']) {
      const r = await runCli(['simulate', '--port', '0', '--now', bad], {}, tmp.dir);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toBe(`callsync: --now ${JSON.stringify(bad)} is not a time; use YYYY-MM-DD, an ISO timestamp (e.g. 2026-11-01T12:00:00Z) or unix seconds\n`);
    }
    const missing = await runCli(['simulate', '--demo', '--port', '0'], {}, tmp.dir);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^callsync: data\/demo-simulator\.json not found: run `callsync demo` first[^\n]*\n$/);
    const clash = await runCli(['simulate', '--demo', '--calls', '5'], {}, tmp.dir);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/^callsync: --demo serves the demo's recorded apps and clock; leave out --calls\n$/);
  });
});
