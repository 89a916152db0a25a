import { lookup } from 'node:dns/promises';
import { connect } from 'node:net';
import type { Dispatcher } from 'undici';
import { defaultBaseUrls, type AppSettings, type Settings } from '../config/load.js';
import { CallsApi } from '../source/calls-api.js';
import { ChatApi } from '../source/chat-api.js';
import { ApiError } from '../source/errors.js';
import { AppHttpClient } from '../source/http-client.js';
import { RequestPacer } from '../source/request-pacer.js';
import type { Clock } from '../config/clock.js';

/**
 * `callsync check`: one cheap request per API and app, and what its answer means in words. The
 * verdict comes from the error's kind and the service's code (source/errors.ts), not from message
 * text; a request that got no answer at all is diagnosed separately (DNS, then TCP), so the line
 * says "DNS name not found" or "connection refused" rather than a library's error code.
 */

export type ApiName = 'Calls API' | 'Chat API';

export interface CheckLine {
  readonly app: string;
  readonly api: ApiName;
  readonly ok: boolean;
  /** "ok", or the verdict and what to do, in one line; never the key. */
  readonly text: string;
}

/** Attempts per probe: two, so a single dropped packet is not "unreachable", yet a dead host answers in seconds. */
export const CHECK_MAX_ATTEMPTS = 2;
/** Per attempt: a service that answers at all answers a one-row request well within this. */
export const CHECK_TIMEOUT_MS = 10_000;

const NETWORK_WORDS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'DNS name not found',
  EAI_AGAIN: 'DNS lookup failed (no DNS server answered; check the network)',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'timed out',
};

/** Why a host gave no HTTP answer, found with a DNS lookup and a bare TCP connect (no request sent). */
export async function diagnoseHost(baseUrl: string, timeoutMs: number): Promise<string> {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  try {
    await lookup(host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return NETWORK_WORDS[code] ?? `DNS lookup failed (${code})`;
  }
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (why: string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`timed out (no answer to a connection on port ${port} within ${Math.round(timeoutMs / 1000)} s)`), timeoutMs);
    socket.once('connect', () => done(`port ${port} accepts connections but no HTTP answer came (a TLS or proxy problem, or a stalled service)`));
    socket.once('error', (err: NodeJS.ErrnoException) => done(NETWORK_WORDS[err.code ?? ''] ?? `connection failed (${err.code ?? err.message})`));
  });
}

/** The verdict on one failed probe, in words, with what to check. */
async function verdict(err: unknown, app: AppSettings, baseUrl: string, field: 'callsBaseUrl' | 'chatBaseUrl'): Promise<string> {
  if (!(err instanceof ApiError)) return `failed: ${(err as Error).message}`;
  const code = err.serviceCode ? ` (${err.serviceCode}${err.status ? `, HTTP ${err.status}` : ''})` : err.status ? ` (HTTP ${err.status})` : '';
  const host = new URL(baseUrl).host;
  switch (err.serviceCode) {
    case 'AUTH_ERR_APIKEY_NOT_FOUND':
    case 'AUTH_ERR_EMPTY_APIKEY':
      return `wrong key${code}: the service does not accept the key in ${app.apiKeyEnv} for app ${app.appId}; copy the app's REST API key from the dashboard`;
    case 'AUTH_ERR_NO_ACCESS':
      return `no access${code}: the key in ${app.apiKeyEnv} lacks the fullAccess scope; create a REST API key with fullAccess`;
    case 'AUTH_ERR_INVALID_APPID':
    case 'AUTH_ERR_EMPTY_APPID':
      return `unknown app${code}: ${host} knows no app ${app.appId} in region ${app.region}; check appId and region`;
    case 'ERR_PLAN_RESTRICTION':
      return `plan restriction${code}: the app's plan does not include this API; check the plan in the dashboard`;
    case 'ERR_SUBSCRIPTION_EXPIRED':
      return `subscription expired${code}: renew the app's subscription in the dashboard`;
    default:
      break;
  }
  if (err.kind === 'auth') return `refused${code}: check the app ID, region and the key in ${app.apiKeyEnv} (fullAccess scope)`;
  if (err.kind === 'account') return `refused for the account${code}: check the plan and subscription in the dashboard`;
  if (err.kind === 'rate_limited') return `rate limited${code}: the key could not be tried; wait a minute and run check again`;
  if (err.kind === 'transient' && err.status === undefined) {
    return `unreachable host ${host}: ${await diagnoseHost(baseUrl, 5_000)}; check appId and region${defaultBaseUrls(app.appId, app.region)[field] !== baseUrl ? ` and ${field}` : ''}, and this machine's network`;
  }
  // The host answered, and its answer did not come whole (cut off, or trickling past requestTimeoutMs).
  if (err.kind === 'transient' && err.status !== undefined && err.status < 300) return `incomplete answer${code}: ${err.message}`;
  if (err.kind === 'transient') return `service error${code}: the service failed to answer; try again later`;
  // Anything else (a redirect, an unexpected shape): the client's own message, already key-free.
  return `unexpected answer${code}: ${err.message}`;
}

/** Probes one app: List Calls (perPage=1) on the Calls API, one day of Usage Metrics on the Chat API. */
export async function checkApp(deps: { dispatcher: Dispatcher; clock: Clock }, settings: Settings, app: AppSettings): Promise<CheckLine[]> {
  const label = `${app.appId} (${app.region})`;
  const apiKey = app.apiKey;
  if (!apiKey) {
    const text = `environment variable ${app.apiKeyEnv} is not set; export the app's REST API key (fullAccess) in it`;
    return [{ app: label, api: 'Calls API', ok: false, text }, { app: label, api: 'Chat API', ok: false, text }];
  }
  // A client per API: after an auth error a client refuses every later request, and the Chat API
  // may answer differently (another host, another plan).
  const client = (): AppHttpClient =>
    new AppHttpClient({
      appId: app.appId, region: app.region, apiKey, dispatcher: deps.dispatcher, pacer: new RequestPacer(app.requestsPerMinute, deps.clock), clock: deps.clock,
      timeoutMs: Math.min(settings.requestTimeoutMs, CHECK_TIMEOUT_MS), maxAttempts: Math.min(settings.maxAttempts, CHECK_MAX_ATTEMPTS),
      retryBaseMs: settings.retryBaseMs, maxResponseBytes: settings.maxResponseBytes,
    });
  const nowSec = Math.floor(deps.clock.now() / 1000);
  const probes: [ApiName, string, 'callsBaseUrl' | 'chatBaseUrl', () => Promise<unknown>][] = [
    ['Calls API', app.callsBaseUrl, 'callsBaseUrl', () => new CallsApi(client(), app.callsBaseUrl).listCalls(1, 1)],
    ['Chat API', app.chatBaseUrl, 'chatBaseUrl', () => new ChatApi(client(), app.chatBaseUrl).usageStats(nowSec - 86_400, nowSec, settings.usageTimestampUnit)],
  ];
  return Promise.all(
    probes.map(async ([api, baseUrl, field, probe]): Promise<CheckLine> => {
      try {
        await probe();
        return { app: label, api, ok: true, text: 'ok' };
      } catch (err) {
        return { app: label, api, ok: false, text: await verdict(err, app, baseUrl, field) };
      }
    }),
  );
}
