import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version in the project's package.json. Found by walking up from this module, because it runs
 * both from src/cli (tsx) and from dist/src/cli (the built bin), one folder deeper.
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i += 1) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'callsync' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here: look one folder up
    }
    dir = dirname(dir);
  }
  return 'unknown';
}
