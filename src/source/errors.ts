/**
 * API errors carry a stable `kind` that callers branch on; the service's `code` and the HTTP
 * status are kept for messages. Classification: the body's `code` first, the HTTP status second
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

export function isRetryable(kind: ApiErrorKind): boolean {
  return kind === 'rate_limited' || kind === 'transient';
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly kind: ApiErrorKind,
    readonly code: string | undefined,
    readonly status: number | undefined,
    readonly attempts: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
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
