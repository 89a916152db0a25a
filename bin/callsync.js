#!/usr/bin/env -S node --max-semi-space-size=32
// Thin entry point: the compiled CLI lives in dist/ (built by `npm run build`, run on install by `prepare`).
// The young generation is 32 MB a half instead of Node's 16: a sync's calls live from their list
// page to their transaction, about as long as Node's default young generation takes to fill, so
// every young collection copied most of them (issue 16: ~10 % of a 50,000-call sync's CPU). The
// flag can only be given on the command line; `env -S` passes it (GNU coreutils ≥ 8.30, BSD, macOS).
import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    console.error('callsync: dist/ is missing; run `npm run build` first.');
    process.exitCode = 1;
    return;
  }
  throw err;
});
