/** Helpers of the benchmark: the simulator process and its control channel, timed child processes. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Agent } from 'undici';
import type { AdvanceOptions, FaultProfile, SimStats, SimulatorOptions } from '../src/simulator/index.js';
import type { SimCommand } from './sim-server.js';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
/** The built CLI as the `callsync` bin runs it (`npm run build`: scripts/bundle-cli.mjs). */
export const CLI_MAIN = join(REPO, 'dist/cli/main.js');
/**
 * `callsync` as an installed bin runs it: bin/callsync.js executed itself (what npm's bin link or
 * `npx callsync` runs), with Node's defaults unless the environment says otherwise. Spawn it with
 * BIN_PATH as PATH.
 */
export const CALLSYNC_BIN = join(REPO, 'bin/callsync.js');
/** PATH for CALLSYNC_BIN: this Node's folder first, so the bin's `env node` finds the Node running the bench. */
export const BIN_PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);

/** The simulator running in bench/sim-server.ts, driven over its stdin. */
export class SimProcess {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly lines: Interface,
    readonly url: string,
  ) {
    lines.on('line', (line) => {
      const msg = JSON.parse(line) as { id: number; ok: boolean; result?: unknown; error?: string };
      const w = this.waiting.get(msg.id);
      if (!w) return;
      this.waiting.delete(msg.id);
      if (msg.ok) w.resolve(msg.result);
      else w.reject(new Error(msg.error ?? 'simulator command failed'));
    });
  }

  static async start(opts: SimulatorOptions): Promise<SimProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/sim-server.ts', JSON.stringify(opts)], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const lines = createInterface({ input: child.stdout });
    const url = await new Promise<string>((resolve, reject) => {
      lines.once('line', (l) => resolve((JSON.parse(l) as { url: string }).url));
      child.once('exit', (code) => reject(new Error(`simulator exited (${code}): ${err}`)));
    });
    return new SimProcess(child, lines, url);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  private send<T>(c: Omit<SimCommand, 'id'>): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: (v) => resolve(v as T), reject });
      this.child.stdin.write(`${JSON.stringify({ ...c, id })}\n`);
    });
  }

  baseUrls(appId: string): Promise<{ callsBaseUrl: string; chatBaseUrl: string }> {
    return this.send({ cmd: 'baseUrls', appId });
  }
  stats(appId: string): Promise<SimStats> {
    return this.send({ cmd: 'stats', appId });
  }
  resetStats(): Promise<null> {
    return this.send({ cmd: 'resetStats' });
  }
  advance(appId: string, opts: AdvanceOptions): Promise<{ ended: number; recorded: number; added: number }> {
    return this.send({ cmd: 'advance', appId, opts });
  }
  setFaults(faults: FaultProfile): Promise<null> {
    return this.send({ cmd: 'setFaults', faults });
  }
  rss(): Promise<number> {
    return this.send<{ rssBytes: number }>({ cmd: 'memory' }).then((m) => m.rssBytes);
  }
  /** CPU time the simulator process has used so far (user + system), in ms. */
  cpuMs(): Promise<number> {
    return this.send<{ cpuMs: number }>({ cmd: 'memory' }).then((m) => m.cpuMs);
  }
  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    if (this.child.exitCode === null) {
      this.child.stdin.end();
      await exited;
    }
  }
}

export interface TimedRun {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
  /** "Maximum resident set size" of /usr/bin/time -v, in bytes (undefined when time is missing). */
  maxRssBytes: number | undefined;
}

/** Runs a command under /usr/bin/time -v (when present) and collects its output and peak RSS. */
export async function runTimed(cmd: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; useTime?: boolean } = {}): Promise<TimedRun> {
  const useTime = opts.useTime ?? true;
  const t0 = performance.now();
  const child = useTime
    ? spawn('/usr/bin/time', ['-v', cmd, ...args], { cwd: REPO, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(cmd, args, { cwd: REPO, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const wallMs = performance.now() - t0;
  const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1];
  return { code, stdout, stderr, wallMs, maxRssBytes: kb ? Number(kb) * 1024 : undefined };
}

/** Runs a bench/*.ts script in a fresh Node process (through tsx) and parses its last stdout line as JSON. */
export async function runScript<T>(script: string, arg: unknown, opts: { time?: boolean } = {}): Promise<{ result: T; run: TimedRun }> {
  const run = await runTimed(process.execPath, ['--import', 'tsx', script, JSON.stringify(arg)], { useTime: opts.time ?? false });
  const last = run.stdout.trim().split('\n').pop() ?? '';
  if (run.code !== 0 || !last.startsWith('{')) {
    throw new Error(`${script} failed (exit ${run.code}): ${run.stderr.slice(-2000)}${run.stdout.slice(-500)}`);
  }
  return { result: JSON.parse(last) as T, run };
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const MB = 1024 * 1024;

/**
 * A bare JSON GET against the Calls API for the bench's own clients (bound, naive): no pacing,
 * retries or validation. `requests` counts what was sent.
 */
export function bareJsonClient(callsBaseUrl: string, apiKey: string, agent: Agent): { getJson(path: string): Promise<unknown>; readonly requests: number } {
  const base = new URL(callsBaseUrl);
  const prefix = base.pathname.replace(/\/$/, '');
  const headers = { apikey: apiKey, accept: 'application/json' };
  let requests = 0;
  return {
    get requests() {
      return requests;
    },
    async getJson(path) {
      requests++;
      const res = await agent.request({ origin: base.origin, path: prefix + path, method: 'GET', headers });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} for ${path}: ${text.slice(0, 200)}`);
      return JSON.parse(text) as unknown;
    },
  };
}
