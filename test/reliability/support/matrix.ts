import { resolveConfig, type Settings } from '../../../src/config/load.js';
import type { AppSyncResult } from '../../../src/sync/sync-app.js';
import { KEY_ENV, TEST_KEY } from '../../helpers/harness.js';

/** One row of the fault matrix: what was injected, what the sync did, and the bound it was held to. */
export interface MatrixRow {
  fault: string;
  /** Status of each run, in order (most rows need one run; some need the documented second). */
  runs: string[];
  /** Requests the client made (every attempt counts), over all runs. */
  requests: number;
  /** Requests a fault-free run of the same dataset and settings makes: the baseline of `requests`. */
  clean: number | null;
  retries: number;
  rateLimited: number;
  /** The asserted upper bound of `requests`. */
  bound: number;
  /** Requests the server (simulator or test server) received. */
  serverRequests: number;
  end: string;
}

export class FaultMatrix {
  readonly rows: MatrixRow[] = [];
  private readonly refs: { fault: string; where: string }[] = [];

  constructor(readonly title: string) {}

  add(fault: string, results: readonly AppSyncResult[], extra: { clean: number | null; bound: number; serverRequests: number; end: string }): MatrixRow {
    const row: MatrixRow = {
      fault,
      runs: results.map((r) => r.status),
      requests: results.reduce((n, r) => n + r.requests, 0),
      retries: results.reduce((n, r) => n + r.retries, 0),
      rateLimited: results.reduce((n, r) => n + r.rateLimited, 0),
      ...extra,
    };
    this.rows.push(row);
    return row;
  }

  /** A row covered by an existing test: named in the table, not run twice. */
  reference(fault: string, where: string): void {
    this.refs.push({ fault, where });
  }

  /** A Markdown table, rows in the order of `order` (tests may finish in any order). */
  format(order: readonly string[] = []): string {
    const rank = (f: string): number => {
      const i = order.indexOf(f);
      return i < 0 ? order.length : i;
    };
    const rows = [...this.rows].sort((a, b) => rank(a.fault) - rank(b.fault));
    const head = '| fault | runs | requests (clean run) | retries | 429s | bound | server saw | end state |';
    const sep = '|---|---|---|---|---|---|---|---|';
    const lines = rows.map(
      (r) =>
        `| ${r.fault} | ${r.runs.join(' → ')} | ${r.requests}${r.clean === null ? '' : ` (${r.clean})`} | ${r.retries} | ${r.rateLimited} | ≤ ${r.bound} | ${r.serverRequests} | ${r.end} |`,
    );
    for (const r of this.refs) lines.push(`| ${r.fault} | covered by ${r.where} | | | | | | |`);
    return [`### ${this.title}`, '', head, sep, ...lines, ''].join('\n');
  }
}

/** Settings for one app at explicit base URLs (a proxy, a test server), with short retries for tests. */
export function settingsAt(
  urls: { callsBaseUrl: string; chatBaseUrl: string },
  database: string,
  extra: Record<string, unknown> = {},
  app: Record<string, unknown> = {},
  env: Record<string, string> = { [KEY_ENV]: TEST_KEY },
): Settings {
  return resolveConfig(
    {
      database,
      apps: [{ appId: 'app1', region: 'us', apiKeyEnv: KEY_ENV, requestsPerMinute: 100_000, ...urls, ...app }],
      requestTimeoutMs: 2_000,
      // The simulator's clock stands at 2025-12-01; liveMaxDays is measured on the wall clock.
      liveMaxDays: 3650,
      ...extra,
    },
    { CALLSYNC_RETRY_BASE_MS: '5', ...env },
  );
}
