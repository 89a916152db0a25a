/**
 * A simulator dataset's calls as a sync stores them from Get Call: each call as the service's wire
 * format gives it, through the real transform (parseCall, apiCallToRows), `size` calls at a time.
 * The benches that write a database without HTTP (queries.ts, store-only.ts) build their rows here.
 */
import type { AppDataset } from '../src/simulator/dataset.js';
import type { CallRows } from '../src/store/schema.js';
import { apiCallToRows, parseCall } from '../src/transform/call-rows.js';

/** Calls 0 … calls-1 of `data` as rows, in batches of `size`; a call that does not parse is left out. */
export function* datasetRowBatches(data: AppDataset, calls: number, size: number, ctx: { appId: string; region: string; now: number }): Generator<CallRows[]> {
  for (let at = 0; at < calls; at += size) {
    const batch: CallRows[] = [];
    for (let i = at; i < Math.min(calls, at + size); i++) {
      const raw: unknown = data.getWire(i);
      const parsed = parseCall(raw, `#${i}`);
      if (!parsed.ok) continue;
      batch.push(apiCallToRows(parsed.call, raw, { ...ctx, source: 'detail', listFingerprint: null }));
    }
    yield batch;
  }
}
