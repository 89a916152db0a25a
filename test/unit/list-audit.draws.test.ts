import { describe, expect, it } from 'vitest';
import type { ApiCall } from '../../src/source/schemas.js';
import { FIRST_AUDITS, ListAudit } from '../../src/sync/list-audit.js';

const entry = (i: number): ApiCall => ({ sessionId: `s${i}` }) as ApiCall;

/** Routes n entries without media; returns the positions (from 1) audited. */
function routeAll(audit: ListAudit, n: number): number[] {
  const audited: number[] = [];
  for (let i = 1; i <= n; i++) if (audit.route(entry(i), `fp${i}`) === 'audit') audited.push(i);
  return audited;
}

describe('ListAudit: spread audits drawn in each window, every window reached audited once', () => {
  it('the drawn entry of each window [2^k, 2^(k+1)) is audited as it is listed', () => {
    const audit = new ListAudit(undefined, undefined, (n) => n - 1); // the window's last entry
    expect(routeAll(audit, 200)).toEqual([...Array.from({ length: FIRST_AUDITS }, (_, i) => i + 1), 31, 63, 127]);
    // The window [128, 256) ended at 200 before its drawn entry (255): one of its entries stored as listed instead.
    const [late, ...more] = audit.unreachedDraws();
    expect(more).toEqual([]);
    expect(Number(late!.sessionId.slice(1))).toBeGreaterThanOrEqual(128);
    expect(Number(late!.sessionId.slice(1))).toBeLessThanOrEqual(200);
    expect(late!.listFingerprint).toBe(`fp${late!.sessionId.slice(1)}`);
    expect(audit.unreachedDraws()).toEqual([]); // once
  });

  it('a window whose drawn entry was reached leaves nothing after the listing', () => {
    const audit = new ListAudit(undefined, undefined, () => 0); // the window's first entry
    expect(routeAll(audit, 200).slice(FIRST_AUDITS)).toEqual([16, 32, 64, 128]);
    expect(audit.unreachedDraws()).toEqual([]);
  });

  it('entries no longer trusted: nothing is drawn', () => {
    const audit = new ListAudit(undefined, 'differs', (n) => n - 1);
    expect(routeAll(audit, 40)).toEqual([]);
    expect(audit.unreachedDraws()).toEqual([]);
  });

  it.each([20, 47, 100, 300, 1_000, 5_000])('%i entries, media on some: the same count of audits whatever the draws', (n) => {
    const count = (pick: (m: number) => number): number => {
      const audit = new ListAudit(undefined, undefined, pick);
      let audits = 0;
      for (let i = 1; i <= n; i++) {
        const media = i % 3 === 0 ? { hasRecording: true, recordings: Array.from({ length: 1 + (i % 5) }, () => ({})) } : {};
        if (audit.route({ sessionId: `s${i}`, ...media } as ApiCall, `fp${i}`) === 'audit') audits++;
      }
      return audits + audit.unreachedDraws().length;
    };
    const first = count(() => 0);
    expect(count((m) => m - 1)).toBe(first);
    for (let t = 0; t < 20; t++) expect(count((m) => Math.floor(Math.random() * m))).toBe(first);
  });
});
