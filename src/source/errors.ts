import { CallsyncError, type ErrorCode } from '../config/errors.js';

/**
 * API errors carry a stable `kind` that callers branch on (and our `code`, API_ and the kind); the
 * service's own code (`serviceCode`) and the HTTP status are kept for messages. Classification: the body's `code` first, the HTTP status second
 * (api-facts.md, Errors: statuses are undocumented and vary between clients).
 */
export type ApiErrorKind =
  | 'auth' // the key or app is wrong: stop this app, retrying cannot help
  | 'account' // plan or subscription: stop this app
  | 'not_found' // the resource does not exist: a per-record outcome
  | 'rate_limited' // retry after the stated delay
  | 'transient' // 5xx, resets, timeouts, truncated bodies: retry with backoff
  | 'client' // any other 4xx or an unusable response: do not retry
  | 'aborted'; // this process was asked to stop (SIGTERM/SIGINT): not the service's fault

const KIND_BY_CODE: Readonly<Record<string, ApiErrorKind>> = {
  AUTH_ERR_EMPTY_APIKEY: 'auth',
  AUTH_ERR_APIKEY_NOT_FOUND: 'auth',
  AUTH_ERR_NO_ACCESS: 'auth',
  AUTH_ERR_EMPTY_APPID: 'auth',
  AUTH_ERR_INVALID_APPID: 'auth',
  ERR_PLAN_RESTRICTION: 'account',
  ERR_SUBSCRIPTION_EXPIRED: 'account',
  ERR_CALL_SESSION_NOT_FOUND: 'not_found',
  ERR_EMPTY_CALL_SESSION_ID: 'client',
  ERR_GUID_NOT_FOUND: 'not_found',
  ERR_TOO_MANY_REQUESTS: 'rate_limited',
};

export function classify(status: number | undefined, code: string | undefined): ApiErrorKind {
  if (code) {
    const known = KIND_BY_CODE[code];
    if (known) return known;
    if (code.startsWith('AUTH_ERR_')) return 'auth';
  }
  if (status === undefined) return 'transient';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status >= 500) return 'transient';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  return 'client';
}

/**
 * Whether an auth-kind answer refuses the key itself (401, one of the service's AUTH_ERR_ codes, or a
 * 403 with no code to tell) rather than one resource: a 403 with another code (ERR_GROUP_NOT_JOINED)
 * is about that request's subject. Only a refused key stops every later request of the app.
 */
export function refusesKey(kind: ApiErrorKind, status: number | undefined, code: string | undefined): boolean {
  return kind === 'auth' && (status !== 403 || code === undefined || code.startsWith('AUTH_ERR_'));
}

export function isRetryable(kind: ApiErrorKind): boolean {
  return kind === 'rate_limited' || kind === 'transient';
}

const CODE_BY_KIND: Readonly<Record<ApiErrorKind, ErrorCode>> = {
  auth: 'API_AUTH',
  account: 'API_ACCOUNT',
  not_found: 'API_NOT_FOUND',
  rate_limited: 'API_RATE_LIMITED',
  transient: 'API_TRANSIENT',
  client: 'API_CLIENT',
  aborted: 'API_ABORTED',
};

/**
 * A page refused as a page: HTTP 400, 404 or 422 without a service code (Django REST framework's
 * paging answers a page past the last `{"detail": "Invalid page."}`). Not the key's refusals
 * (`auth`), nor an answer naming the service's own error.
 */
export function invalidPage(err: unknown): boolean {
  return err instanceof ApiError && (err.kind === 'client' || err.kind === 'not_found') && err.serviceCode === undefined && (err.status === 400 || err.status === 404 || err.status === 422);
}

export class ApiError extends CallsyncError {
  constructor(
    message: string,
    readonly kind: ApiErrorKind,
    /** The service's code (`AUTH_ERR_APIKEY_NOT_FOUND`, …); ours is `code`. */
    readonly serviceCode: string | undefined,
    readonly status: number | undefined,
    readonly attempts: number,
    /** The app id when the message already names the app at its start (`app X (region): …`), so callers do not name it twice. */
    readonly appId?: string,
  ) {
    super(CODE_BY_KIND[kind], message);
    this.name = 'ApiError';
  }
}

/** True when `err`'s message already starts by naming app `appId` (an ApiError from that app's client). */
export function namesApp(err: unknown, appId: string): boolean {
  return err instanceof ApiError && err.appId === appId;
}

/** Pulls `code` and `message` out of an error body of any documented shape, or of none. */
export function readErrorBody(text: string): { code?: string; message?: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {};
  }
  if (!body || typeof body !== 'object') return {};
  const outer = body as Record<string, unknown>;
  const inner = outer.error && typeof outer.error === 'object' ? (outer.error as Record<string, unknown>) : outer;
  const code = typeof inner.code === 'string' ? inner.code : undefined;
  const message = typeof inner.message === 'string' ? inner.message : undefined;
  return { ...(code ? { code } : {}), ...(message ? { message: message.slice(0, 200) } : {}) };
}
