import { spawn } from 'node:child_process';
import { CLI_MAIN, collect } from './cli.js';

/**
 * The CLI on a pseudo-terminal (util-linux `script`), with `answers` typed on its stdin: what a
 * person at a prompt sees. stdout and stderr arrive mixed, as on a terminal.
 */
export async function runCliOnTerminal(args: string[], answers: string, cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const command = [process.execPath, CLI_MAIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'dumb', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.end(answers);
  const res = await collect(child);
  return { code: res.code, out: res.stdout + res.stderr };
}
