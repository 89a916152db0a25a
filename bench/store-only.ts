/**
 * Storing alone: what the real store costs per call, without HTTP, listing or validation. The
 * calls of a throughput app (the simulator's own dataset of it, as Get Call serves them) go through
 * the real transform untimed (bench/dataset-rows.ts), then the real store (upsertCalls) in
 * transactions of MIN_CALLS_PER_TRANSACTION calls, as a sync's group commit writes them; only the
 * transactions are timed (CPU, user + sys, of this process). It gives the CPU target of issue 16
 * its floor: a sync cannot cost less than the bare client plus this.
 *
 *   node --import tsx bench/store-only.ts '<StoreOnlyArgs as JSON>'     → one JSON line (StoreOnlyResult)
 */
import { rmSync } from 'node:fs';
import { AppDataset } from '../src/simulator/dataset.js';
import { datasetSeed, DEFAULT_NOW } from '../src/simulator/index.js';
import { upsertCalls } from '../src/store/calls-repo.js';
import { openStore } from '../src/store/connection.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { MIN_CALLS_PER_TRANSACTION } from '../src/sync/page-writer.js';
import { datasetRowBatches } from './dataset-rows.js';

export interface StoreOnlyArgs {
  database: string;
  appId: string;
  calls: number;
  seed: number;
}

export interface StoreOnlyResult {
  calls: number;
  /** CPU (user + sys) of the transactions only. */
  cpuMs: number;
}

/** As the sync's group commit does when calls arrive faster than its delay. */
const BATCH = MIN_CALLS_PER_TRANSACTION;

const args = JSON.parse(process.argv[2] ?? '{}') as StoreOnlyArgs;
for (const s of ['', '-wal', '-shm']) rmSync(args.database + s, { force: true });
const store = await openStore(args.database);
let cpuUs = 0;
let stored = 0;
try {
  await migrateToLatest(store.db);
  // The simulator's own dataset of this app (its seed mixed with the app id, as startSimulator does).
  const data = new AppDataset(args.appId, 'us', datasetSeed({ appId: args.appId, seed: args.seed }), args.calls, DEFAULT_NOW);
  for (const batch of datasetRowBatches(data, args.calls, BATCH, { appId: args.appId, region: 'us', now: DEFAULT_NOW })) {
    const t = process.cpuUsage();
    await store.db.transaction().execute((trx) => upsertCalls(trx, batch));
    const d = process.cpuUsage(t);
    cpuUs += d.user + d.system;
    stored += batch.length;
  }
} finally {
  await store.close();
}
// Every call of the dataset parses: one left out would make the figure a cost per fewer calls.
if (stored !== args.calls) throw new Error(`${args.calls - stored} of the dataset's ${args.calls} calls did not parse`);
const result: StoreOnlyResult = { calls: stored, cpuMs: cpuUs / 1000 };
process.stdout.write(`${JSON.stringify(result)}\n`);
