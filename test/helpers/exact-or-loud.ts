import { expect } from 'vitest';

/**
 * Which way a sync run came out against the truth:
 * - 'exact': status ok and the database equals the truth;
 * - 'loud': not ok (partial/failed), so nobody is told the data is whole, whatever the diff;
 * - 'ok-with-missing': status ok while the database differs from the truth (the one forbidden outcome).
 */
export type Branch = 'exact' | 'loud' | 'ok-with-missing';

export interface RunLike {
  status: string;
  error?: string;
}

export function branchOf(result: RunLike, diff: readonly string[]): Branch {
  if (result.status !== 'ok') return 'loud';
  return diff.length === 0 ? 'exact' : 'ok-with-missing';
}

/**
 * The rule every listing quirk is held to: after a run, the database equals the truth and the run
 * says ok, or the run says it is not ok. Fails exactly when status === 'ok' and the diff is not
 * empty (a soft failure: the test goes on and fails at its end); returns the branch that held.
 */
export function expectExactOrLoud(result: RunLike, diff: readonly string[], label = 'run'): Branch {
  const branch = branchOf(result, diff);
  // Soft, so that the later runs of a case still run and are recorded; the test fails all the same.
  if (branch === 'ok-with-missing') expect.soft(diff.slice(0, 8), `${label}: status ok but the database differs from the truth in ${diff.length} line(s)`).toEqual([]);
  return branch;
}

/** A run that is not ok must say so in words: status partial or failed and an error line. */
export function expectLoudNamesProblem(result: RunLike, label = 'run'): void {
  if (result.status === 'ok') return;
  expect(['partial', 'failed'], `${label}: status ${result.status}`).toContain(result.status);
  expect(result.error ?? '', `${label}: a ${result.status} run must name its problem in 'error'`).toMatch(/\w{3,}/);
}
