import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { redact, redactStrings, type Secret } from '../config/secret.js';
import { ApiError, classify, isRetryable, readErrorBody, refusesKey, type ApiErrorKind } from './errors.js';
import { decodeContentEncoding } from './content-encoding.js';
import { AnswerCutOff, BodyTooLarge, DeadlinePassed, dispatchGet, headerValue, type RawResponse } from './dispatch-get.js';
import { capNesting } from './json-limits.js';
import { longIdsAsText } from './long-ids.js';
import { cutOffProblem, describeNetworkError, timeoutProblem } from './network-errors.js';
import type { Clock } from '../config/clock.js';
import type { RequestPacer } from './request-pacer.js';

export type RequestKind = 'list' | 'get' | 'members' | 'stats';

export interface RequestCounters {
  requests: number;
  byKind: Record<RequestKind, number>;
  retries: number;
  rateLimited: number;
}

/** A request failed and is about to be retried: what a progress display shows while it waits. */
export interface RetryEvent {
  /** The host asked (`1a2b.call-us.cometchat.io`). */
  host: string;
  /** What failed, as the request describes itself (`List Calls page 3`). */
  what: string;
  /** The attempt about to be made, and the most there will be. */
  attempt: number;
  maxAttempts: number;
  /** How long the client waits before it (ms). */
  waitMs: number;
  /** A few words on why: `connection refused`, `HTTP 503`, `rate limited (HTTP 429)`. */
  reason: string;
  kind: ApiErrorKind;
  /** Not a retry: the server said no requests remain, and the app's requests wait for its reset. */
  pause?: boolean;
}

export interface HttpClientOptions {
  readonly appId: string;
  readonly region: string;
  readonly apiKey: Secret;
  readonly dispatcher: Dispatcher;
  readonly pacer: RequestPacer;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly retryBaseMs: number;
  /** Largest body read, counted while streaming (default 32 MB): a bigger one is a client error. */
  readonly maxResponseBytes?: number;
  /** Aborts waiting and in-flight requests (shutdown). */
  readonly signal?: AbortSignal;
  /** Told before each wait for a retry, so a dead service does not look like a blank screen. */
  readonly onRetry?: (e: RetryEvent) => void;
}

/** Longest Retry-After we wait for; a longer one ends the request (the run reports it). */
const MAX_RETRY_AFTER_MS = 5 * 60_000;
/** A pause for the server's rate-limit reset this long or longer is said (onRetry, `pause`). */
const PAUSE_NOTICE_MS = 5_000;
const MAX_BACKOFF_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

const lenientUtf8 = new TextDecoder('utf-8');

/**
 * A body's text as TextDecoder gives it (a leading BOM dropped). Strict: a body with invalid UTF-8
 * is damaged in transit (or hostile), never silently U+FFFD, and gives undefined. isUtf8 and
 * toString are simdutf/V8 fast paths; a fatal TextDecoder took ~4× as long on every body.
 */
export function decodeUtf8(bytes: Buffer, strict: boolean): string | undefined {
  if (!strict) return lenientUtf8.decode(bytes);
  if (!isUtf8(bytes)) return undefined;
  const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return bytes.toString('utf8', bom ? 3 : 0);
}

const header = headerValue;

/**
 * What getJson returns instead of a parsed body when the body is the `expected` text the caller
 * passed: the caller already holds that text's value, so it is not parsed again (JSON.parse of a
 * Get Call body and the tree it builds were a tenth of a sync's CPU when Get Call answers with the
 * listed entry itself). JSON.parse never returns a symbol.
 */
export const AS_EXPECTED: unique symbol = Symbol('body as expected');

/**
 * Whether `bytes` are the UTF-8 of `pieces` joined. Compared as bytes, piece by piece: neither the
 * body's text nor the joined expected text is built (each would be a string as long as the body).
 */
export function bytesAre(bytes: Buffer, pieces: readonly string[]): boolean {
  let at = 0;
  for (const piece of pieces) {
    const b = Buffer.from(piece, 'utf8');
    if (at + b.length > bytes.length || bytes.compare(b, 0, b.length, at, at + b.length) !== 0) return false;
    at += b.length;
  }
  return at === bytes.length;
}

/** Retry-After is either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Both documented spellings of the reset header; unix seconds. */
function resetAtMs(headers: IncomingHttpHeaders): number | undefined {
  const raw = header(headers, 'x-ratelimit-reset') ?? header(headers, 'x-rate-limit-reset');
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(n) && n > 0 ? n * 1000 : undefined;
}

function remaining(headers: IncomingHttpHeaders): number | undefined {
  const raw = header(headers, 'x-ratelimit-remaining') ?? header(headers, 'x-rate-limit-remaining');
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

interface Failure {
  kind: ApiErrorKind;
  detail: string;
  /** A few words for the retry line; the detail when absent. */
  reason?: string;
  /** What to check, when the kind's usual advice does not fit (network failures). */
  advice?: string;
  code?: string;
  status?: number;
  waitMs?: number;
}

/**
 * One app's HTTP access to the service: pacing, timeouts, retries with backoff and jitter,
 * classification. Never follows redirects, so the `apikey` header only goes to the configured host.
 * After an auth or account error every later call fails at once without a request.
 */
export class AppHttpClient {
  readonly counters: RequestCounters = {
    requests: 0,
    byKind: { list: 0, get: 0, members: 0, stats: 0 },
    retries: 0,
    rateLimited: 0,
  };
  #stopped: ApiError | undefined;
  /** Base URLs parsed once: a client asks one or two bases tens of thousands of times. */
  readonly #bases = new Map<string, { origin: string; host: string; prefix: string }>();

  /** The request headers, built once (undici reads them, never changes them). */
  readonly #headers: Record<string, string>;

  constructor(private readonly opts: HttpClientOptions) {
    this.#headers = { apikey: opts.apiKey.reveal(), accept: 'application/json' };
  }

  #base(baseUrl: string): { origin: string; host: string; prefix: string } {
    let b = this.#bases.get(baseUrl);
    if (!b) {
      const u = new URL(baseUrl);
      b = { origin: u.origin, host: u.host, prefix: u.pathname.replace(/\/$/, '') };
      this.#bases.set(baseUrl, b);
    }
    return b;
  }

  /** Tells onRetry of a long pause the server asked for (see PAUSE_NOTICE_MS). */
  #notePause(origin: string, kind: RequestKind, waitMs: number): void {
    try {
      const { maxAttempts } = this.opts;
      this.opts.onRetry?.({ host: new URL(origin).host, what: `the next ${kind} request`, attempt: 1, maxAttempts, waitMs, reason: 'the service says no requests remain until its X-RateLimit-Reset', kind: 'rate_limited', pause: true });
    } catch {
      // A display that fails to show the wait must not fail the request.
    }
  }

  /**
   * The code and message of an error body, the key masked in both. The body's text was masked
   * before, but a key written with JSON escapes (`\u0074…`) is plain only once parsed, and these
   * two reach the retry line (`reason`, logged as a warning) and the error, word for word.
   */
  #errorBody(text: string): { code?: string; message?: string } {
    const { code, message } = readErrorBody(text);
    const keys = [this.opts.apiKey];
    return { ...(code !== undefined ? { code: redact(code, keys) } : {}), ...(message !== undefined ? { message: redact(message, keys) } : {}) };
  }

  /** The app this client talks for (the one `label` names). */
  get appId(): string {
    return this.opts.appId;
  }

  get label(): string {
    return `app ${this.opts.appId} (${this.opts.region})`;
  }

  /**
   * GETs `baseUrl + path` (path already encoded) and returns the parsed JSON body, or AS_EXPECTED
   * for a 2xx body that is the UTF-8 of the `expected` pieces joined. Throws ApiError.
   */
  async getJson(baseUrl: string, path: string, kind: RequestKind, what: string, expected?: readonly string[]): Promise<unknown> {
    const base = this.#base(baseUrl);
    const fullPath = base.prefix + path;
    const { clock, maxAttempts } = this.opts;
    let last: Failure | undefined;
    let attempts = 0;
    const signal = this.opts.signal;
    const aborted = (): ApiError => new ApiError(`${this.label}: ${what} not sent: stopping`, 'aborted', undefined, undefined, attempts, this.opts.appId);
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (this.#stopped) throw this.#stopped;
      if (signal?.aborted) throw aborted();
      try {
        const slot = this.opts.pacer.acquire(signal);
        if (slot) await slot;
      } catch {
        throw aborted();
      }
      if (this.#stopped) throw this.#stopped;
      attempts = attempt;
      const outcome = await this.#attempt(base.origin, fullPath, kind, expected);
      if ('body' in outcome) return outcome.body;
      last = outcome;
      if (!isRetryable(outcome.kind) || attempt === maxAttempts) break;
      if (outcome.waitMs !== undefined && outcome.waitMs > MAX_RETRY_AFTER_MS) break;
      const backoff = Math.min(MAX_BACKOFF_MS, this.opts.retryBaseMs * 2 ** (attempt - 1));
      const jittered = backoff / 2 + clock.random() * (backoff / 2);
      const wait = Math.max(outcome.waitMs ?? 0, jittered);
      if (outcome.kind === 'rate_limited') this.opts.pacer.pauseUntil(clock.now() + wait);
      this.counters.retries++;
      try {
        this.opts.onRetry?.({ host: base.host, what, attempt: attempt + 1, maxAttempts, waitMs: wait, reason: outcome.reason ?? outcome.detail, kind: outcome.kind });
      } catch {
        // A display that fails to show the wait must not fail the request.
      }
      try {
        await clock.sleep(wait, signal);
      } catch {
        throw aborted();
      }
    }
    const f = last ?? { kind: 'transient' as const, detail: 'no attempt made' };
    // A 403 with a code of its own refuses this request's subject, not the key: no key advice.
    const advice = f.advice ?? (f.kind === 'auth' && !refusesKey(f.kind, f.status, f.code) ? 'the service refused this one request; the key itself was not refused' : ADVICE[f.kind]);
    const err = new ApiError(
      redact(`${this.label}: ${what} failed: ${f.detail}${isRetryable(f.kind) ? ` (gave up after ${attempts} attempts)` : ''}${advice ? `; ${advice}` : ''}`, [this.opts.apiKey]),
      f.kind,
      f.code,
      f.status,
      attempts,
      this.opts.appId,
    );
    if (f.kind === 'account' || refusesKey(f.kind, f.status, f.code)) this.#stopped = err;
    throw err;
  }

  async #attempt(origin: string, path: string, kind: RequestKind, expected: readonly string[] | undefined): Promise<{ body: unknown } | Failure> {
    const { clock, timeoutMs } = this.opts;
    const maxBytes = this.opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.counters.requests++;
    this.counters.byKind[kind]++;
    // undici's headersTimeout/bodyTimeout only bound the wait for headers and between two chunks:
    // a server dripping one byte a second never trips them. dispatchGet's deadline covers the whole
    // attempt, and the run's signal stops it too.
    let res: RawResponse;
    try {
      res = await dispatchGet(this.opts.dispatcher, { origin, path, headers: this.#headers, timeoutMs, maxBytes, clock, signal: this.opts.signal });
    } catch (err) {
      if (this.opts.signal?.aborted) return { kind: 'aborted', detail: 'stopping' };
      if (err instanceof BodyTooLarge) {
        // Not retried: the same request would get the same body. Reading stopped at the cap.
        return { kind: 'client', detail: `response body larger than maxResponseBytes (${maxBytes} bytes), not read further; raise maxResponseBytes if the service really sends such bodies` };
      }
      const host = new URL(origin).host;
      const p =
        err instanceof DeadlinePassed ? timeoutProblem(host, timeoutMs, err) : err instanceof AnswerCutOff ? cutOffProblem(host, err.statusCode, err.bytesIn) : describeNetworkError(err, host, timeoutMs);
      // An answer that had begun carries its status: `check` then tells it from a host that is not there.
      const begun = err instanceof DeadlinePassed || err instanceof AnswerCutOff ? err.statusCode : 0;
      return { kind: 'transient', detail: p.detail, reason: p.reason, advice: p.advice, ...(begun ? { status: begun } : {}) };
    }
    const ok2xx = res.statusCode >= 200 && res.statusCode < 300;
    const body = decodeContentEncoding(res.headers['content-encoding'], res.bytes, maxBytes);
    // An error's status decides what happens next, whatever its body's coding (only its message is lost).
    if ('problem' in body && ok2xx) return { kind: body.retry ? 'transient' : 'client', status: res.statusCode, detail: body.problem };
    const bytes = 'problem' in body ? res.bytes : body.bytes;
    // Valid UTF-8 (the pieces are strings) and free of the key (the caller's text was redacted, and
    // a body holding the key differs from it): nothing below would change or refuse it.
    if (ok2xx && expected !== undefined && bytesAre(bytes, expected)) return { body: AS_EXPECTED };
    const decoded = decodeUtf8(bytes, ok2xx);
    if (decoded === undefined) {
      // Data bytes garbled in transit: asking again may give them whole; stored as U+FFFD they never would be.
      return { kind: 'transient', status: res.statusCode, detail: `HTTP ${res.statusCode} with a body that is not valid UTF-8 (${bytes.length} bytes)` };
    }
    // A server that echoes the key (api-seed.md §5: bodies may carry `apiKey`) must not get it
    // into raw_json, rejected payloads or error messages: it is masked before anything reads it.
    const text = redact(decoded, [this.opts.apiKey]);
    const status = res.statusCode;
    const left = remaining(res.headers);
    const reset = resetAtMs(res.headers);
    if (left !== undefined && left <= 0 && reset !== undefined) {
      // The server says the window is spent: wait for its reset rather than spend a request on a 429.
      const until = Math.min(reset, clock.now() + MAX_RETRY_AFTER_MS);
      this.opts.pacer.pauseUntil(until);
      // Said when it is long: every answer of a server saying none remain until an hourly reset
      // held the app 5 minutes a wave, without a word under --json (probe round 9, F10).
      if (until - clock.now() >= PAUSE_NOTICE_MS) this.#notePause(origin, kind, until - clock.now());
    }
    // 202 Accepted: taken, not answered yet (a gateway queueing it, a service computing it). Read
    // as a 200, a proxy's `202 {"data":[]}` on every List Calls request ended ok with no call stored.
    if (status === 202) return { kind: 'transient', status, detail: 'HTTP 202 (accepted, not answered yet); the answer was not used' };
    if (status >= 200 && status < 300) {
      let body: unknown;
      try {
        // Nesting deeper than any record has is cut, so no later JSON.stringify can overflow.
        // Ids past 2^53 are read as the text of their digits (see longIdsAsText).
        body = capNesting(JSON.parse(longIdsAsText(text)) as unknown);
        // JSON escapes (\u0050, \/) spell the key differently in the text; decoded, it is plain again.
        if (text.includes('\\')) body = redactStrings(body, [this.opts.apiKey]);
      } catch {
        // A truncated or garbled 200 is a transport fault, not bad data: ask again.
        return { kind: 'transient', status, detail: `HTTP ${status} with a body that is not JSON (${text.length} bytes)` };
      }
      // A 200 whose body is an error (no "data", an error code) is that error: classified by its
      // code like any other, so a rate limit is retried and a not-found is a not-found. So is one
      // that states an error beside its `data` (`{"data":[],"error":{…}}`, a gateway's or a
      // GraphQL-style partial answer): the data may not be the whole answer (asked again, retried),
      // and an empty list page taken from it on every request ended ok with no call stored.
      if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
        const beside = 'data' in body && statesError((body as Record<string, unknown>).error);
        const { code, message } = 'data' in body && !beside ? {} : this.#errorBody(text);
        if (code) {
          // An unknown code: not retried in a body that is only an error; beside data, a partial
          // answer that asking again may give whole.
          const kind = classify(undefined, code) === 'transient' && !beside ? 'client' : classify(undefined, code);
          if (kind === 'rate_limited') this.counters.rateLimited++;
          const waitMs = kind === 'rate_limited' ? parseRetryAfter(header(res.headers, 'retry-after'), clock.now()) : undefined;
          return { kind, status, code, ...(waitMs !== undefined ? { waitMs } : {}), detail: `HTTP ${status} with an error body ${code}${message ? ` (${message})` : ''}` };
        }
        if (beside) return { kind: 'transient', status, detail: `HTTP ${status} with an error beside its data${message ? ` (${message})` : ''}; the answer was not used` };
      }
      return { body };
    }
    if (status >= 300 && status < 400) {
      return { kind: 'client', status, detail: `HTTP ${status} redirect not followed (the API key is only sent to the configured host); check callsBaseUrl/chatBaseUrl` };
    }
    const { code, message } = this.#errorBody(text);
    const errKind = classify(status, code);
    let waitMs: number | undefined;
    if (errKind === 'rate_limited') {
      this.counters.rateLimited++;
      waitMs = parseRetryAfter(header(res.headers, 'retry-after'), clock.now());
      if (waitMs === undefined && reset !== undefined) waitMs = Math.max(0, reset - clock.now());
    }
    return {
      kind: errKind,
      status,
      ...(code ? { code } : {}),
      ...(waitMs !== undefined ? { waitMs } : {}),
      reason: errKind === 'rate_limited' ? `rate limited (HTTP ${status})` : `HTTP ${status}${code ? ` ${code}` : ''}`,
      detail: `HTTP ${status}${code ? ` ${code}` : ''}${message ? ` (${message})` : ''}`,
    };
  }
}

/**
 * Whether a body's `error` field states an error: an object with a code or a message, or a text.
 * `null`, `false`, `{}` and `""` beside the data are a success envelope's empty slot.
 */
function statesError(error: unknown): boolean {
  if (typeof error === 'string') return error.trim() !== '';
  if (error === null || typeof error !== 'object' || Array.isArray(error)) return false;
  const e = error as Record<string, unknown>;
  return (typeof e.code === 'string' && e.code !== '') || (typeof e.message === 'string' && e.message !== '');
}

const ADVICE: Partial<Record<ApiErrorKind, string>> = {
  auth: 'check the app ID, region and the REST API key (fullAccess scope) in the environment variable named by apiKeyEnv',
  account: 'the service refused this app for its plan or subscription; check the account in the dashboard',
  rate_limited: 'lower requestsPerMinute in the config to match the plan',
};
