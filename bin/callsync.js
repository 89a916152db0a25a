#!/usr/bin/env node
// Thin entry point: the compiled CLI lives in dist/ (built by `npm run build`, run on install by `prepare`).
import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    console.error('callsync: dist/ is missing; run `npm run build` first.');
    process.exitCode = 1;
    return;
  }
  throw err;
});
