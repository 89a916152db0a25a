import { expect } from 'vitest';
import { expectExactOrLoud, type Branch } from '../../helpers/exact-or-loud.js';
import { syncWith, withStore } from '../../helpers/harness.js';
import type { FakeCallsService } from './fake-calls-service.js';
import { settingsAt } from './matrix.js';

/**
 * One seed of a listing test: a sync at `pageSize` into `database`, held against every call the
 * service still holds (calls removed at the service stay stored: a sync deletes nothing), ok and
 * exact or loud; `namesListing` also requires a loud run to name List Calls in one line.
 */
export async function syncSeed(service: FakeCallsService, database: string, pageSize: number, label: string, opts: { namesListing?: boolean } = {}): Promise<Branch> {
  const r = (await syncWith(settingsAt(service.baseUrls('app1'), database, { pageSize }))).results[0]!;
  const stored = await withStore(database, async ({ db }) => new Set((await db.selectFrom('calls').select('session_id').execute()).map((x) => x.session_id)));
  const missing = service.calls.filter((c) => !stored.has(c.sessionId)).map((c) => `${c.sessionId}: not stored`);
  const branch = expectExactOrLoud(r, missing, label);
  if (opts.namesListing && branch === 'loud') expect(r.error, label).toMatch(/^[^\n]*List Calls [^\n]*$/);
  return branch;
}
