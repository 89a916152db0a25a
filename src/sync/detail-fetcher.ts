import type pLimit from 'p-limit';
import type { CallsApi } from '../source/calls-api.js';
import { ApiError } from '../source/errors.js';
import type { NewRejectedRow } from '../store/schema.js';
import { apiCallToRows, fingerprint, parseCall, type CallRows } from '../transform/call-rows.js';
import type { Logger } from '../log/logger.js';
import type { PageWrite } from './page-writer.js';
import type { Pending } from './page-planner.js';

export interface DetailCounters {
  detailFetches: number;
  notFound: number;
  failedCalls: number;
}

export interface DetailFetcherDeps {
  api: Pick<CallsApi, 'getCall'>;
  limit: ReturnType<typeof pLimit>;
  appId: string;
  region: string;
  runId: string;
  nowSeconds: () => number;
  log: Logger;
  counters: DetailCounters;
  signal?: AbortSignal | undefined;
}

/**
 * Fetches the details of pending calls (Get Call, concurrently under the app's limit) and turns
 * every answer into writes: the call's rows, a not-found mark (keeping what the list said), or a
 * rejected record. An auth or account error is remembered as `fatal` (the app stops); a transient
 * failure leaves the call unwritten and counted, so the run is partial and the next run fetches it.
 */
export class DetailFetcher {
  #fatal: string | undefined;

  constructor(private readonly d: DetailFetcherDeps) {}

  get fatal(): string | undefined {
    return this.#fatal;
  }

  /** Builds a rejected record for `raw` (the caller adds it to a page's writes). */
  rejected(endpoint: string, key: string, reason: string, raw: unknown): NewRejectedRow {
    const payload = (JSON.stringify(raw) ?? 'undefined').slice(0, 1_000_000);
    this.d.log.warn({ endpoint, recordKey: key, reason }, 'record rejected');
    return { app_id: this.d.appId, endpoint, record_key: key, reason, payload, fingerprint: fingerprint(raw), run_id: this.d.runId, created_at: this.d.nowSeconds() };
  }

  /**
   * Fetches `pending` and returns one page's writes together with `listRows` and `rejects`.
   * `onLive` hears of listed calls Get Call shows still live.
   */
  async complete(listRows: CallRows[], pending: readonly Pending[], rejects: NewRejectedRow[], onLive: (id: string) => void): Promise<PageWrite> {
    const { d } = this;
    const rows = listRows;
    const notFoundIds: string[] = [];
    d.counters.detailFetches += pending.length;
    await Promise.all(
      pending.map((p) =>
        d.limit(async () => {
          if (this.#fatal || d.signal?.aborted) return;
          try {
            const got = await d.api.getCall(p.call.sessionId);
            const now = d.nowSeconds();
            if (!got.found) {
              d.counters.notFound++;
              // Keep what the listing said, flagged: the service no longer has this session.
              if (p.json !== undefined) rows.push(apiCallToRows(p.call, undefined, { appId: d.appId, region: d.region, now, source: 'list', listFingerprint: p.listFingerprint, notFoundAt: now, rawJson: p.json }));
              else notFoundIds.push(p.call.sessionId);
              return;
            }
            const json = JSON.stringify(got.raw) ?? 'undefined';
            // A Get body equal to the list entry parses to the same call: it is not validated twice.
            const parsed = json === p.json ? ({ ok: true, call: p.call } as const) : parseCall(got.raw, p.call.sessionId);
            if (!parsed.ok) {
              rejects.push(this.rejected('get_call', parsed.key, parsed.reason, got.raw));
              return;
            }
            const row = apiCallToRows(parsed.call, got.raw, { appId: d.appId, region: d.region, now, source: 'detail', listFingerprint: p.listFingerprint, rawJson: json });
            if (p.json !== undefined && row.call.is_final === 0) onLive(p.call.sessionId);
            rows.push(row);
          } catch (err) {
            if (err instanceof ApiError && (err.kind === 'auth' || err.kind === 'account')) {
              this.#fatal ??= err.message;
              return;
            }
            if (err instanceof ApiError && err.kind === 'aborted') return; // not written: the next run fetches it
            d.counters.failedCalls++;
            d.log.warn({ sessionId: p.call.sessionId, err: (err as Error).message }, 'Get Call failed; the call is retried on the next run');
          }
        }),
      ),
    );
    return { rows, rejects, notFoundIds };
  }
}
