import { DEFAULT_UNUSABLE_ERROR_CODE } from './detail-quirks.js';
import type { UnusableGetSpec } from './types.js';
import type { WireObject } from './wire-call.js';

/** A Get Call answer the detail quirks make instead of the call's own body. */
export interface DetailReply {
  status: number;
  body: string;
  contentType?: string;
  location?: string;
}

/**
 * What a Get Call reply needs of the dataset (AppDataset has it all). An interface rather than an
 * import of dataset.ts, which imports this module through detail-state.ts: no import cycle.
 */
export interface DetailDataset {
  readonly indexCount: number;
  readonly details: {
    getReply(index: number, src: () => UnusableSource): DetailReply | 'not-found' | null;
    isMarked(index: number): boolean;
  };
  sessionIdOf(index: number): string;
  getWire(index: number): WireObject;
  getCallBody(index: number): string | null;
  isListed(index: number): boolean;
  isNotFound(index: number): boolean;
  isMalformed(index: number): boolean;
}

/** What an unusable answer needs of the dataset. */
export interface UnusableSource {
  sessionId: string;
  /** The call's Get wire object (a copy the answer may change). */
  wire(): WireObject;
  /** The whole Get body of another listed call. */
  otherBody(): string;
}

const HTML = 'text/html; charset=utf-8';
// The proxy's text claims to be JSON: a client must not trust the content type.
const NON_JSON_TEXT = 'upstream connect error or disconnect/reset before headers. reset reason: connection termination';
const MAINTENANCE_PAGE =
  '<!DOCTYPE html>\n<html><head><title>Scheduled maintenance</title></head>\n<body><h1>We will be back soon</h1><p>The service is under maintenance.</p></body></html>\n';
/** Where 'redirect' sends the client: another host, which must never receive the key. */
const REDIRECT_HOST = 'https://maintenance.cometchat.invalid';

/** The unusable answer of `spec` for one call (status 200 but for 'redirect'). */
export function unusableReply(spec: UnusableGetSpec, src: UnusableSource): DetailReply {
  switch (spec.answer) {
    case 'empty-object':
      return { status: 200, body: '{"data":{}}' };
    case 'null':
      return { status: 200, body: '{"data":null}' };
    case 'empty-array':
      return { status: 200, body: '{"data":[]}' };
    case 'no-session-id': {
      const w = src.wire();
      delete w.sessionId;
      return { status: 200, body: JSON.stringify({ data: w }) };
    }
    case 'other-session':
      return { status: 200, body: src.otherBody() };
    case 'html-200':
      return { status: 200, body: MAINTENANCE_PAGE, contentType: HTML };
    case 'non-json-200':
      return { status: 200, body: NON_JSON_TEXT };
    case 'error-body-200': {
      const code = spec.errorCode ?? DEFAULT_UNUSABLE_ERROR_CODE;
      const message = `The request for ${src.sessionId} could not be completed (${code})`;
      return { status: 200, body: JSON.stringify({ error: { code, message, devMessage: message, source: 'ext-api' } }) };
    }
    default: {
      const location = `${REDIRECT_HOST}/v3/calls/${encodeURIComponent(src.sessionId)}`;
      return { status: 302, body: `<html><body>Moved: <a href="${location}">here</a></body></html>\n`, contentType: HTML, location };
    }
  }
}

/**
 * The answer a detail quirk imposes on this Get Call request for call #index, 'not-found', or null
 * for the call's own body (AppDataset.getCallBody). Counts the request for a marked call.
 */
export function detailGetReply(ds: DetailDataset, index: number): DetailReply | 'not-found' | null {
  return ds.details.getReply(index, () => ({
    sessionId: ds.sessionIdOf(index),
    wire: () => ds.getWire(index),
    otherBody: () => ds.getCallBody(otherCall(ds, index)) ?? '{"data":{}}',
  }));
}

/** The nearest older (else newer) call that Get answers whole, for 'other-session'. */
function otherCall(ds: DetailDataset, index: number): number {
  for (let d = 1; d < ds.indexCount; d++) {
    for (const j of [index - d, index + d]) {
      if (ds.isListed(j) && !ds.isNotFound(j) && !ds.isMalformed(j) && !ds.details.isMarked(j)) return j;
    }
  }
  return index;
}
