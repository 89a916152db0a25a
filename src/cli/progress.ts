import cliProgress from 'cli-progress';
import type { AppProgress } from '../sync/sync-app.js';

export interface ProgressDisplay {
  update(p: AppProgress): void;
  stop(): void;
}

/**
 * A live per-app display on a terminal (cli-progress): pages, calls listed, details fetched, rate
 * and ETA. Full syncs know their total from the listing; incremental ones show counts only.
 * Returns undefined when `stream` is not a terminal, where one summary line per app is printed instead.
 */
export function createProgressDisplay(stream: NodeJS.WriteStream = process.stderr): ProgressDisplay | undefined {
  if (!stream.isTTY) return undefined;
  const multibar = new cliProgress.MultiBar(
    {
      stream,
      clearOnComplete: false,
      hideCursor: true,
      etaBuffer: 20,
      format: '{app} [{bar}] {value}/{total} calls | {pages} pages | {gets} Get Call | {rate} calls/s | ETA {eta_formatted}',
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, { bar: cliProgress.SingleBar; started: number }>();
  return {
    update(p) {
      const key = `${p.appId} (${p.region})`;
      let entry = bars.get(key);
      const total = Math.max(p.listedTotal ?? p.callsSeen, p.callsSeen, 1);
      if (!entry) {
        entry = { bar: multibar.create(total, 0, { app: key.padEnd(18), pages: 0, gets: 0, rate: 0 }), started: Date.now() };
        bars.set(key, entry);
      }
      const seconds = Math.max((Date.now() - entry.started) / 1000, 0.001);
      entry.bar.setTotal(total);
      entry.bar.update(p.callsSeen, { pages: p.pages, gets: p.detailFetches, rate: Math.round(p.callsSeen / seconds) });
    },
    stop() {
      multibar.stop();
    },
  };
}
