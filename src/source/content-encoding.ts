import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync, type ZlibOptions } from 'node:zlib';

/** A body taken out of its content codings, or why it could not be. */
export type DecodedBody = { bytes: Buffer } | { problem: string; retry: boolean };

/**
 * The body as it was before the codings its Content-Encoding header names (RFC 9110, 8.4), undone
 * last first. callsync sends no Accept-Encoding, and a request without one lets the server pick any
 * coding (RFC 9110, 12.5.3): a hostile fake answered every request gzip-compressed, and every
 * request failed as "a body that is not valid UTF-8". gzip, deflate (zlib or raw, as servers differ)
 * and br are undone by Node's zlib, at most `maxBytes` decoded; any other coding is refused by name.
 * No header, or only `identity`: the bytes as they came (nearly every answer, one property read).
 */
export function decodeContentEncoding(header: string | string[] | undefined, bytes: Buffer, maxBytes: number): DecodedBody {
  if (header === undefined) return { bytes };
  const codings = (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let out = bytes;
  for (const coding of codings.reverse()) {
    const undo = UNDO.get(coding);
    if (!undo) {
      // Asking again gets the same coding: not retried.
      return { problem: `HTTP body in Content-Encoding "${coding.slice(0, 40)}", which callsync cannot decode (it decodes gzip, deflate and br); a proxy in between may be compressing answers`, retry: false };
    }
    try {
      out = undo(out, { maxOutputLength: maxBytes });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        return { problem: `response body larger than maxResponseBytes (${maxBytes} bytes) once its ${coding} coding is undone; raise maxResponseBytes if the service really sends such bodies`, retry: false };
      }
      // Bytes garbled in transit: asking again may give them whole.
      return { problem: `HTTP body in Content-Encoding ${coding} that does not decode (${bytes.length} bytes): ${(err as Error).message}`, retry: true };
    }
  }
  return { bytes: out };
}

type Undo = (b: Buffer, o: ZlibOptions) => Buffer;

/** "deflate" is meant to be zlib-wrapped (RFC 9110, 8.4.1.2); some servers send it raw. */
function inflateEither(b: Buffer, o: ZlibOptions): Buffer {
  try {
    return inflateSync(b, o);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw err;
    return inflateRawSync(b, o);
  }
}

/** A Map, not an object: a coding named "constructor" must not find Object's. */
const UNDO = new Map<string, Undo>([
  ['gzip', gunzipSync],
  ['x-gzip', gunzipSync],
  ['deflate', inflateEither],
  ['br', (b, o) => brotliDecompressSync(b, { maxOutputLength: o.maxOutputLength })],
]);
