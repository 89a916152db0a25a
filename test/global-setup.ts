import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * Builds dist/ once before the tests with `npm run build` (tsc, then the bundle the `callsync` bin
 * runs: scripts/bundle-cli.mjs), so that the CLI subprocesses run what a user's bin runs. Running the
 * sources through tsx instead cost ~2 s of CPU per spawn (the loader and esbuild start in every
 * process), and the suite spawns the CLI hundreds of times. A build error fails the run here, before
 * any test, rather than testing a stale dist/.
 */
export default function setup(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: REPO, stdio: 'inherit' });
}
