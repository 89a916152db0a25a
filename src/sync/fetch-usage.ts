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
  /** One line per app whose answer could not be checked whole (no range echoed, a figure left out); its figures are kept. */
  warnings: string[];
}

/**
 * Whether an echoed bound (the number as sent, in s or ms, or seconds from ISO text) is `sec`. A
 * second either way is the same instant: a service may echo an exclusive end as the last
 * millisecond or second it counted.
 */
function sameInstant(echoed: number, sec: number): boolean {
  const asSec = echoed > 1e11 ? echoed / 1000 : echoed;
  return Math.abs(asSec - sec) <= 1;
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
      const label = `app ${app.appId} (${app.region})`;
      const m = stats.data.metrics;
      const figures: UsageFigures = {
        audioMinutes: m.audio_minutes ?? m.audioMinutes ?? null,
        videoMinutes: m.video_minutes ?? m.videoMinutes ?? null,
        recordedMinutes: m.recorded_minutes ?? m.recordedMinutes ?? null,
      };
      // An answer without the minutes is no figure: taken as 0, the export said the app used nothing.
      if (figures.audioMinutes === null && figures.videoMinutes === null) {
        failures.push(`${label}: the Usage Metrics answer carries no audio_minutes or video_minutes (metrics: ${Object.keys(m).slice(0, 8).join(', ') || 'none'}); usage not taken`);
        continue;
      }
      const negative = Object.entries(figures).filter(([, v]) => v !== null && v < 0);
      if (negative.length) {
        failures.push(`${label}: the Usage Metrics answer states negative minutes (${negative.map(([k, v]) => `${k} ${v}`).join(', ')}); usage not taken`);
        continue;
      }
      const echoed = stats.data.time_range;
      if (echoed?.fromDate === undefined || echoed.toDate === undefined) {
        warnings.push(`${label}: the service did not echo the range it read, so its figures cannot be tied to ${period.start}–${period.end}; if they look off, check usageTimestampUnit`);
      } else if (!sameInstant(echoed.fromDate, period.start) || !sameInstant(echoed.toDate, period.end)) {
        // The service echoes its range (in ms in the published example): another range means it read
        // our timestamps in another unit or zone, and its figures are for another period. Set beside
        // ours they would read as a comparison of the same month.
        failures.push(`${label}: the service echoed the range ${echoed.fromDate}–${echoed.toDate}, not ${period.start}–${period.end}: its figures are for another period; usage not taken (check usageTimestampUnit)`);
        continue;
      }
      // One of the two left out is not 0 either: its column stays empty, and the line says why.
      for (const [name, v] of [['video_minutes', figures.videoMinutes], ['audio_minutes', figures.audioMinutes]] as const) {
        if (v === null) warnings.push(`${label}: the Usage Metrics answer carries no ${name}; usage_${name} and its delta are left empty`);
      }
      usage.set(`${app.appId}/${app.region}`, figures);
    } catch (err) {
      failures.push(err instanceof ApiError ? err.message : `app ${app.appId} (${app.region}): usage not fetched (${(err as Error).message})`);
    }
  }
  return { usage, failures, warnings };
}
