// Bundles the compiled CLI (dist/src/cli/main.js, from `tsc -p tsconfig.build.json`) into
// dist/cli/: what the `callsync` bin, the tests and the benchmarks run.
//
// Why: Node resolves, reads and compiles every ES module file on its own. The CLI's own ~150
// files, kysely's 279 and zod's few hundred cost a `callsync sync` ~0.3 s of CPU before its first
// request (a 200-call sync: 1.08 s → 0.78 s of CPU), and every CLI process pays it. esbuild (already
// installed with tsx, its install script approved in package.json) puts them in a few files: one
// chunk per command, still loaded only when that command runs (src/cli/program.ts).
//
// Bundled: our code, kysely and zod (pure ES modules). Every other dependency stays a package that
// Node loads from node_modules: CommonJS packages (undici, pino, pg, …) would need interop shims
// inside an ES module bundle, better-sqlite3 is a native addon, and a dependency added later is
// external until someone decides otherwise.
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const BUNDLED = new Set(['kysely', 'zod']);
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const external = Object.keys(pkg.dependencies ?? {})
  .filter((d) => !BUNDLED.has(d))
  .flatMap((d) => [d, `${d}/*`]);

const outdir = new URL('../dist/cli/', import.meta.url).pathname;
rmSync(outdir, { recursive: true, force: true });
await build({
  // The SQLite query child (src/store/destinations/sqlite-query-process.ts) is an entry of its own:
  // dist/cli/sqlite-query-child.js, found beside the CLI by `callsync query`.
  entryPoints: [new URL('../dist/src/cli/main.js', import.meta.url).pathname, new URL('../dist/src/store/destinations/sqlite-query-child.js', import.meta.url).pathname],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  // tsc's source maps are read and carried through: stack traces can be mapped to src/.
  sourcemap: 'linked',
  logLevel: 'warning',
});
