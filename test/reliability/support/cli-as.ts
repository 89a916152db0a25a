import { spawn, spawnSync } from 'node:child_process';
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
 * setpriv (util-linux) arguments that run a command as root minus the capabilities that let root
 * ignore file modes: without them root is held to a folder's 0555 like its owner would be.
 */
const WITHOUT_DAC = ['--inh-caps=-all', '--bounding-set=-dac_override,-dac_read_search,-fowner,-linux_immutable', '--'];

/** Who the read-only commands run as, and how (see userForFileModes). */
export interface FileModeUser {
  /** For test titles and failure messages. */
  label: string;
  run(args: string[], env: Record<string, string>): Promise<CliResult>;
  /** Whether this user can create a file in `folder` (a file system may ignore modes). */
  canWrite(folder: string): boolean;
}

const BASE_ENV = (env: Record<string, string>): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: '/tmp', CALLSYNC_RETRY_BASE_MS: '5', ...env });

function command(kind: 'self' | 'nobody' | 'setpriv', argv: string[]): { file: string; args: string[]; ids: { uid?: number; gid?: number } } {
  if (kind === 'setpriv') return { file: 'setpriv', args: [...WITHOUT_DAC, process.execPath, ...argv], ids: {} };
  return { file: process.execPath, args: argv, ids: kind === 'nobody' ? { uid: NOBODY.uid, gid: NOBODY.gid } : {} };
}

function user(kind: 'self' | 'nobody' | 'setpriv', label: string): FileModeUser {
  return {
    label,
    run(args, env) {
      const c = command(kind, ['--import', TSX, MAIN, ...args]);
      return collect(spawn(c.file, c.args, { cwd: REPO, env: BASE_ENV(env), stdio: ['ignore', 'pipe', 'pipe'], ...c.ids }));
    },
    canWrite(folder) {
      const probe = `require('node:fs').writeFileSync(require('node:path').join(${JSON.stringify(folder)}, 'probe'), '')`;
      const c = command(kind, ['-e', probe]);
      return spawnSync(c.file, c.args, { cwd: '/', env: BASE_ENV({}), stdio: 'ignore', ...c.ids }).status === 0;
    },
  };
}

/** Whether `nobody` can start the CLI from this checkout (not when it lies in a folder only root may enter). */
function nobodyCanRunCli(): boolean {
  const r = spawnSync(process.execPath, ['--import', TSX, MAIN, '--version'], { cwd: REPO, env: BASE_ENV({}), stdio: 'ignore', ...NOBODY, timeout: 30_000 });
  return r.error === undefined && r.status === 0;
}

/**
 * A user for whom a folder's file modes apply, to run the CLI against a read-only folder. Not root:
 * this process's own user. Root ignores file modes, so: `nobody` when it can read this checkout,
 * else (a clone in /root or in a `mktemp -d` folder, which `nobody` cannot enter) root itself
 * without the capabilities that override file modes. Throws, rather than skipping the read-only
 * checks, when neither is possible.
 */
export function userForFileModes(): FileModeUser {
  if (!runningAsRoot()) return user('self', 'this user');
  if (nobodyCanRunCli()) return user('nobody', 'nobody');
  if (spawnSync('setpriv', [...WITHOUT_DAC, 'true'], { stdio: 'ignore' }).status === 0) return user('setpriv', 'root without CAP_DAC_OVERRIDE');
  throw new Error(`running as root, and nobody can start the CLI from ${REPO} (a folder other users cannot enter) and setpriv (util-linux) cannot drop root's file-mode override: install util-linux, or run the tests from a folder nobody can read`);
}
