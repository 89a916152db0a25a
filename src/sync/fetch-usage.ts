import type { Dispatcher } from 'undici';
import type { Settings } from '../config/load.js';
import { ChatApi, type UsageFigures } from '../source/chat-api.js';
import { ApiError } from '../source/errors.js';
import { AppHttpClient } from '../source/http-client.js';
import { RequestPacer } from '../source/request-pacer.js';
import type { Clock } from '../config/clock.js';

/** The period asked for, in unix seconds (end exclusive); export's Period satisfies it. */
export interface UsagePeriod {
  readonly start: number;
  readonly end: number;
}

export interface UsageFetch {
  usage: Map<string, UsageFigures>;
  /** One line per app whose figures could not be fetched (no key, a refused key, an unreachable API). */
  failures: string[];
  /** One line per app whose echoed range differs from the one asked (its figures are kept). */
  warnings: string[];
}

/**
 * Fetches the service's Usage Metrics of each configured app for the period. An app that could not
 * be fetched is a failure line naming it and its region (the caller decides: `export --with-usage`
 * exits 1, since an export with the usage columns silently empty reads as "no usage"); keys never
 * appear in them.
 */
export async function fetchUsage(deps: { dispatcher: Dispatcher; clock: Clock }, settings: Settings, period: UsagePeriod, appIds?: readonly string[]): Promise<UsageFetch> {
  const usage = new Map<string, UsageFigures>();
  const warnings: string[] = [];
  const failures: string[] = [];
  const apps = settings.apps.filter((a) => !appIds?.length || appIds.includes(a.appId));
  for (const app of apps) {
    if (!app.apiKey) {
      failures.push(`app ${app.appId} (${app.region}): environment variable ${app.apiKeyEnv} is not set; usage not fetched`);
      continue;
    }
    const http = new AppHttpClient({
      appId: app.appId, region: app.region, apiKey: app.apiKey, dispatcher: deps.dispatcher, pacer: new RequestPacer(app.requestsPerMinute, deps.clock),
      clock: deps.clock, timeoutMs: settings.requestTimeoutMs, maxAttempts: settings.maxAttempts, retryBaseMs: settings.retryBaseMs, maxResponseBytes: settings.maxResponseBytes,
    });
    try {
      const stats = await new ChatApi(http, app.chatBaseUrl).usageStats(period.start, period.end, settings.usageTimestampUnit);
      const m = stats.data.metrics;
      const audio = m.audio_minutes ?? m.audioMinutes;
      const video = m.video_minutes ?? m.videoMinutes;
      // An answer without the minutes is no figure: taken as 0, the export said the app used nothing.
      if ((audio === undefined || audio === null) && (video === undefined || video === null)) {
        failures.push(`app ${app.appId} (${app.region}): the Usage Metrics answer carries no audio_minutes or video_minutes (metrics: ${Object.keys(m).slice(0, 8).join(', ') || 'none'}); usage not taken`);
        continue;
      }
      usage.set(`${app.appId}/${app.region}`, { audioMinutes: audio ?? 0, videoMinutes: video ?? 0, recordedMinutes: m.recorded_minutes ?? m.recordedMinutes ?? 0 });
      const echoed = stats.data.time_range;
      if (!echoed) warnings.push(`app ${app.appId} (${app.region}): the service did not echo the range it read, so its figures cannot be tied to ${period.start}–${period.end}; if they look off, check usageTimestampUnit`);
      // The service echoes its range (in ms in the published example): a different range means it
      // read our timestamps in another unit, and its figures are for another period.
      const toSec = (v: number | undefined): number | undefined => (v === undefined ? undefined : v > 1e11 ? Math.round(v / 1000) : v);
      if (echoed && (toSec(echoed.fromDate) !== period.start || toSec(echoed.toDate) !== period.end)) {
        warnings.push(`app ${app.appId} (${app.region}): the service echoed the range ${echoed.fromDate}–${echoed.toDate}, not ${period.start}–${period.end}; check usageTimestampUnit`);
      }
    } catch (err) {
      failures.push(err instanceof ApiError ? err.message : `app ${app.appId} (${app.region}): usage not fetched (${(err as Error).message})`);
    }
  }
  return { usage, failures, warnings };
}
