import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** The built CLI (test/global-setup.ts builds dist/ before the tests): what the `callsync` bin runs. */
export const CLI_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts the real CLI as a subprocess: the built JavaScript the `callsync` bin runs. */
export function spawnCli(args: string[], env: Record<string, string> = {}, cwd = REPO): ChildProcess {
  return spawn(process.execPath, [CLI_MAIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CALLSYNC_RETRY_BASE_MS: '5', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

export function runCli(args: string[], env: Record<string, string> = {}, cwd = REPO): Promise<CliResult> {
  return collect(spawnCli(args, env, cwd));
}
