import { writeFileSync, rmSync } from 'node:fs';
import { SimProcess, CALLSYNC_BIN, BIN_PATH, runTimed } from './lib.js';
const calls = Number(process.argv[2] ?? 100000);
const sim = await SimProcess.start({ apps: [{ appId: `mem${calls}`, region: 'us' as const, apiKey: 'k', calls, seed: 11 }] });
try {
  for (const tag of (process.argv[3] ?? 'a').split(',')) {
    const db = `/tmp/mem/${tag}-${calls}.db`;
    rmSync(db, { force: true }); rmSync(db + '-wal', { force: true }); rmSync(db + '-shm', { force: true });
    writeFileSync('/tmp/mem/c.json', JSON.stringify({ database: db, detailFetch: 'auto', pageSize: 100, concurrency: 8, apps: [{ appId: `mem${calls}`, region: 'us', apiKeyEnv: 'K', requestsPerMinute: 'unlimited', ...(await sim.baseUrls(`mem${calls}`)) }] }));
    const out = `/tmp/mem/${tag}-${calls}.samples`;
    rmSync(out, { force: true });
    const r = await runTimed(CALLSYNC_BIN, ['sync', '--config', '/tmp/mem/c.json', '--json'], { env: { PATH: BIN_PATH, K: 'k', MEM_OUT: out, NODE_OPTIONS: `--require /tmp/mem/sample.cjs ${process.env.EXTRA ?? ''}` } });
    console.log(tag, calls, 'peak', Math.round((r.maxRssBytes ?? 0) / 1048576), 'MB', r.code, r.stdout.slice(0, 80));
  }
} finally { await sim.close(); }
