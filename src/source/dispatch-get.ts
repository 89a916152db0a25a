import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Clock } from '../config/clock.js';

/** A whole response: status, headers (lower-case names, as undici parses them) and every body byte. */
export interface RawResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  bytes: Buffer;
}

/** The body is larger than the cap: reading stopped there (from Content-Length, or while counting). */
export class BodyTooLarge extends Error {}

/**
 * The attempt's deadline passed before the whole response was in. `statusCode` is 0 when no
 * response had begun; else the answer had started (`bytesIn` of its body had come).
 */
export class DeadlinePassed extends Error {
  constructor(
    readonly statusCode: number,
    readonly bytesIn: number,
  ) {
    super(statusCode ? `HTTP ${statusCode} not complete after ${bytesIn} bytes` : 'no answer');
  }
}

/** The connection failed after the answer had begun (`bytesIn` of its body had come): `cause` says how. */
export class AnswerCutOff extends Error {
  constructor(
    readonly statusCode: number,
    readonly bytesIn: number,
    override readonly cause: unknown,
  ) {
    super(`HTTP ${statusCode} cut off after ${bytesIn} bytes`);
  }
}

/** The run's signal stopped the request. */
export class Stopped extends Error {}

export interface GetOptions {
  origin: string;
  path: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxBytes: number;
  clock: Clock;
  signal: AbortSignal | undefined;
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * One GET through `dispatcher.dispatch`, the body gathered as it streams in. This is what
 * `dispatcher.request` does underneath, without what the client never used from it: a Readable
 * body stream, an AsyncResource, and an AbortController + listener per request for the deadline
 * (these cost ~20 µs of CPU a request, most of the client's own share).
 *
 * Settles exactly once: with the response, or with the transport's error, BodyTooLarge (the read
 * stops at `maxBytes`), DeadlinePassed (`timeoutMs` for the whole attempt, headers to last byte:
 * undici's own timeouts only bound a wait between two chunks) or Stopped (`signal`). A request
 * still queued for a connection when the deadline or the signal comes settles at once and is
 * aborted when it would start.
 */
export function dispatchGet(dispatcher: Dispatcher, o: GetOptions): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    const run = o.signal;
    const settle = (err: Error | undefined): void => {
      if (settled) return;
      settled = true;
      timer.cancel();
      run?.removeEventListener('abort', stop);
      if (err) reject(err);
      else resolve({ statusCode, headers, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    };
    /** Ends the attempt from this side: settles, and stops the exchange if undici has started it. */
    const fail = (err: Error): void => {
      if (settled) return;
      settle(err);
      controller?.abort(err);
    };
    const stop = (): void => fail(new Stopped('stopping'));
    const timer = o.clock.setTimeout(() => fail(new DeadlinePassed(statusCode, size)), o.timeoutMs);
    if (run?.aborted) {
      stop();
      return;
    }
    run?.addEventListener('abort', stop, { once: true });
    dispatcher.dispatch(
      { origin: o.origin, path: o.path, method: 'GET', headers: o.headers, headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs },
      {
        onRequestStart(c) {
          controller = c;
          if (settled) c.abort(new Stopped('settled before the request started'));
        },
        onResponseStart(_c, status, h) {
          if (status < 200) return; // 1xx: informational, the response follows
          statusCode = status;
          headers = h;
          const declared = Number(headerValue(h, 'content-length'));
          if (Number.isFinite(declared) && declared > o.maxBytes) fail(new BodyTooLarge());
        },
        onResponseData(_c, chunk) {
          if (settled) return;
          size += chunk.length;
          if (size > o.maxBytes) fail(new BodyTooLarge());
          else chunks.push(chunk);
        },
        onResponseEnd() {
          settle(undefined);
        },
        onResponseError(_c, err) {
          settle(statusCode >= 200 ? new AnswerCutOff(statusCode, size, err) : err);
        },
      },
    );
  });
}
