import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));

/**
 * Builds dist/ once before the tests (as `npm run build` does), so that the CLI subprocesses run the built JavaScript, as the
 * `callsync` bin a user installs does. Running the sources through tsx instead cost ~2 s of CPU per
 * spawn (the loader and esbuild start in every process), and the suite spawns the CLI hundreds of
 * times. A build error fails the run here, before any test, rather than testing a stale dist/.
 */
export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.build.json'], { cwd: REPO, stdio: 'inherit' });
  // The bin runs the bundle made from that output (scripts/bundle-cli.mjs), so the tests do too.
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/bundle-cli.mjs', import.meta.url))], { cwd: REPO, stdio: 'inherit' });
}
