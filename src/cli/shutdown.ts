import { InterruptedError } from '../config/errors.js';
import { EXIT } from './exit-codes.js';

/**
 * The first SIGTERM/SIGINT asks the work to stop (the signal aborts; the current page is written,
 * the run marked interrupted, the lease released); a second one exits at once.
 */
export function abortOnSignals(onFirst?: (signal: NodeJS.Signals) => void): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const handler = (sig: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      process.exit(EXIT.INTERRUPTED);
    }
    onFirst?.(sig);
    controller.abort(new InterruptedError(`received ${sig}`));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    },
  };
}
