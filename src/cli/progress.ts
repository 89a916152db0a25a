import cliProgress from 'cli-progress';
import type { LogOutput, Logger } from '../log/logger.js';
import type { RetryEvent } from '../source/http-client.js';
import type { AppProgress, AppRetryEvent } from '../sync/sync-app.js';
import { sanitizeForTerminal } from './output.js';

export interface ProgressDisplay {
  update(p: AppProgress): void;
  /** A request of the app is waiting for a retry: the app's line says so until its next progress. */
  retry(e: AppRetryEvent): void;
  stop(): void;
}

function seconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return s < 10 ? `${+s.toFixed(1)} s` : `${Math.round(s)} s`;
}

/** `waiting for 1a2b.call-us.cometchat.io: retry 2/6 in 4 s (connection refused)`: one line, inert. */
export function formatRetryLine(e: Pick<RetryEvent, 'host' | 'attempt' | 'maxAttempts' | 'waitMs' | 'reason' | 'pause'>): string {
  if (e.pause) return sanitizeForTerminal(`waiting for ${e.host}: next request in ${seconds(e.waitMs)} (${e.reason})`, { singleLine: true });
  return sanitizeForTerminal(`waiting for ${e.host}: retry ${e.attempt}/${e.maxAttempts} in ${seconds(e.waitMs)} (${e.reason})`, { singleLine: true });
}

/**
 * A live per-app display on a terminal (cli-progress): pages, calls listed, details fetched, rate
 * and ETA, and while a request waits for a retry, what it waits for. Full syncs know their total
 * from the listing; incremental ones show counts only. While it is on screen, log lines are printed
 * above the bars (never through them). Returns undefined when `stream` is not a terminal, where one
 * summary line per app is printed instead.
 */
export function createProgressDisplay(stream: NodeJS.WriteStream = process.stderr, logOutput?: LogOutput): ProgressDisplay | undefined {
  if (!stream.isTTY) return undefined;
  const multibar = new cliProgress.MultiBar(
    {
      stream,
      clearOnComplete: false,
      hideCursor: true,
      etaBuffer: 20,
      format: '{app} [{bar}] {value}/{total} calls | {pages} pages | {gets} Get Call | {rate} calls/s | ETA {eta_formatted}{status}',
    },
    cliProgress.Presets.shades_classic,
  );
  interface Entry {
    bar: cliProgress.SingleBar;
    started: number;
    /** The retry text shown, '' when none. */
    status: string;
  }
  const bars = new Map<string, Entry>();
  let stopped = false;
  // Before the first bar the display is not drawing: lines go straight out; after, above the bars.
  logOutput?.redirect((text) => (bars.size ? multibar.log(text) : stream.write(text)));
  const entryFor = (appId: string, region: string): Entry => {
    const key = `${appId} (${region})`;
    let entry = bars.get(key);
    if (!entry) {
      entry = { bar: multibar.create(1, 0, { app: key.padEnd(18), pages: 0, gets: 0, rate: 0, status: '' }), started: Date.now(), status: '' };
      bars.set(key, entry);
    }
    return entry;
  };
  return {
    update(p) {
      if (stopped) return;
      const entry = entryFor(p.appId, p.region);
      const total = Math.max(p.listedTotal ?? p.callsSeen, p.callsSeen, 1);
      const secs = Math.max((Date.now() - entry.started) / 1000, 0.001);
      entry.bar.setTotal(total);
      entry.status = '';
      entry.bar.update(p.callsSeen, { pages: p.pages, gets: p.detailFetches, rate: Math.round(p.callsSeen / secs), status: '' });
    },
    retry(e) {
      if (stopped) return;
      const entry = entryFor(e.appId, e.region);
      const shown = ` | ${formatRetryLine(e)}`;
      entry.status = shown;
      entry.bar.update({ status: shown });
      // Once the wait is over the line no longer claims it: the next failure says so anew.
      setTimeout(() => {
        if (stopped || entry.status !== shown) return;
        entry.status = '';
        entry.bar.update({ status: '' });
      }, e.waitMs + 250).unref();
      // Drawn now, not at the next tick: the wait is the moment the screen must not look dead.
      multibar.update();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      logOutput?.redirect(undefined);
      // cli-progress drops lines still buffered at stop: draw once more so they are printed.
      if (bars.size) multibar.update();
      multibar.stop();
    },
  };
}

/**
 * Without a live display (not a terminal, --no-progress), retries are warned in the log: the first
 * of each app at once, then at most one per `everyMs` with the number left unsaid, so a dead
 * service cannot flood the log.
 */
export function retryWarner(log: Logger, everyMs = 10_000, now: () => number = Date.now): (e: AppRetryEvent) => void {
  const last = new Map<string, { at: number; unsaid: number }>();
  return (e) => {
    const key = `${e.appId}/${e.region}`;
    const seen = last.get(key);
    const t = now();
    if (seen && t - seen.at < everyMs) {
      seen.unsaid++;
      return;
    }
    const unsaid = seen?.unsaid ?? 0;
    last.set(key, { at: t, unsaid: 0 });
    log.warn(
      { app: e.appId, region: e.region, host: e.host, request: e.what, attempt: e.attempt, maxAttempts: e.maxAttempts, waitMs: Math.round(e.waitMs), reason: e.reason, ...(unsaid ? { retriesNotLogged: unsaid } : {}) },
      `${e.appId} (${e.region}): ${formatRetryLine(e)}${unsaid ? ` (${unsaid} more retries since the last such line)` : ''}`,
    );
  };
}
