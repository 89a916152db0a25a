#!/usr/bin/env node
// Thin entry point: the compiled CLI lives in dist/ (built by `npm run build`, run on install by `prepare`).
// No Node flags on the first line: `env -S` (needed to pass them) is missing from BusyBox (Alpine)
// and the BSDs' env, where the bin would not start at all. None is needed: a larger young
// generation (--max-semi-space-size=32) measured no gain (README, Performance).
import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    console.error('callsync: dist/ is missing; run `npm run build` first.');
    process.exitCode = 1;
    return;
  }
  throw err;
});
