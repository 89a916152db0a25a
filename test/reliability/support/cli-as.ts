import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { collect, REPO, type CliResult } from '../../helpers/cli.js';

const TSX = fileURLToPath(new URL('../../../node_modules/tsx/dist/loader.mjs', import.meta.url));
const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));

/** The uid/gid of `nobody`, the conventional unprivileged account. */
export const NOBODY = { uid: 65534, gid: 65534 } as const;

/** Whether this process runs as root, for which file modes do not stop writes. */
export function runningAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * Runs the CLI like test/helpers/cli.ts's runCli, optionally as another user (only root may): a
 * read-only folder means nothing to root, so the tests run the CLI as `nobody` instead.
 */
export function runCliAs(args: string[], env: Record<string, string>, as?: { uid: number; gid: number }): Promise<CliResult> {
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', HOME: '/tmp', CALLSYNC_RETRY_BASE_MS: '5', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(as ? { uid: as.uid, gid: as.gid } : {}),
  });
  return collect(child);
}
