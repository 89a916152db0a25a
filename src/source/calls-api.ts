import { ApiError, invalidPage } from './errors.js';
import { AS_EXPECTED, type AppHttpClient } from './http-client.js';
import { isGetCallEnvelope, ListEnvelopeSchema, paginationOf, type Pagination } from './schemas.js';

export interface ListCallsPage {
  entries: unknown[];
  pagination: Pagination | undefined;
}

/**
 * What Get Call gave: the call's raw record, not found (ERR_CALL_SESSION_NOT_FOUND), or an answer
 * that cannot be the call asked for (empty, null, without or with another sessionId): the caller
 * keeps the listed data and asks again on a later run.
 */
/**
 * `confirmed`: the answer carried ERR_CALL_SESSION_NOT_FOUND. A bare 404 (an HTML page, no code)
 * may come from a proxy or a deploy in progress for a call that exists, so it is not proof.
 */
export type GetCallResult = { found: true; raw: unknown } | { found: false; confirmed: boolean } | { found: true; unusable: string };
/** Also: Get Call answered exactly the listed entry's text, `listedJson` (see getCall). */
export type GetListedCallResult = GetCallResult | { found: true; asListed: string };

/**
 * Encodes a sessionId as one path segment. encodeURIComponent covers `/`, `?` and `%`; a bare `.`
 * or `..` would still be a dot segment that servers and proxies collapse, so its dots are encoded.
 */
export function encodePathSegment(value: string): string {
  const encoded = encodeURIComponent(value);
  return encoded === '.' || encoded === '..' ? encoded.replace(/\./g, '%2E') : encoded;
}

/** The Calls API (api-seed.md §4.2–4.3) of one app. */
export class CallsApi {
  constructor(
    private readonly http: AppHttpClient,
    private readonly callsBaseUrl: string,
  ) {}

  async listCalls(page: number, perPage: number): Promise<ListCallsPage> {
    let body: unknown;
    try {
      body = await this.http.getJson(this.callsBaseUrl, `/calls?page=${page}&perPage=${perPage}`, 'list', page === 0 ? 'List Calls (first page, asked as page=0)' : `List Calls page ${page}`);
    } catch (err) {
      // A page past the last refused as a page (invalidPage): no entries, and the listing's end
      // rules decide (after a full page an empty one is asked again and the next looked at).
      // Failed, a listing whose last page was full failed every run. Pages 0 and 1 keep the
      // error: how pages are numbered is decided on them (firstPages).
      if (page >= 2 && invalidPage(err)) return { entries: [], pagination: undefined };
      throw err;
    }
    const parsed = ListEnvelopeSchema.safeParse(body);
    if (!parsed.success) {
      throw new ApiError(`${this.http.label}: List Calls page ${page} answered without a "data" array; is callsBaseUrl the Calls API (…/v3)?`, 'client', undefined, 200, 1, this.http.appId);
    }
    return { entries: parsed.data.data, pagination: paginationOf(parsed.data) };
  }

  /**
   * Returns the call's raw record (unwrapping both envelopes), or found:false for
   * ERR_CALL_SESSION_NOT_FOUND. With `listedJson` (the call's list entry as JSON.stringify wrote
   * it), a body that is exactly that entry in the current envelope, `{"data":…}`, byte for byte, is
   * not parsed: `asListed` is that text, the call as listed.
   */
  async getCall(sessionId: string): Promise<GetCallResult>;
  async getCall(sessionId: string, listedJson: string | undefined): Promise<GetListedCallResult>;
  async getCall(sessionId: string, listedJson?: string): Promise<GetListedCallResult> {
    let body: unknown;
    try {
      const expected = listedJson === undefined ? undefined : ['{"data":', listedJson, '}'];
      body = await this.http.getJson(this.callsBaseUrl, `/calls/${encodePathSegment(sessionId)}`, 'get', `Get Call ${JSON.stringify(sessionId.slice(0, 80))}`, expected);
    } catch (err) {
      if (err instanceof ApiError && err.kind === 'not_found') return { found: false, confirmed: err.serviceCode === 'ERR_CALL_SESSION_NOT_FOUND' };
      throw err;
    }
    // The listed entry parsed with this sessionId, so the same text is this call, whole.
    if (body === AS_EXPECTED && listedJson !== undefined) return { found: true, asListed: listedJson };
    if (!isGetCallEnvelope(body)) return { found: true, unusable: 'Get Call answered without a call (no "data" object, or an empty one)' };
    // The record as received, not zod's copy of it: copying turns a "__proto__" key into a prototype.
    const data: unknown = body.data;
    // The legacy envelope is a one-element array. More elements that differ are versions of the call
    // no client can choose between: the first one was stored, ok, whatever the others said (a
    // hostile fake: 10 user-minutes stored for 4).
    if (Array.isArray(data) && data.length > 1) {
      const first = JSON.stringify(data[0]);
      if (data.some((d) => JSON.stringify(d) !== first)) return { found: true, unusable: `Get Call answered ${data.length} different records for one call` };
    }
    const raw: unknown = Array.isArray(data) ? data[0] : data;
    const answered = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).sessionId : undefined;
    if (typeof answered !== 'string' || answered === '') return { found: true, unusable: 'Get Call answered a record without a sessionId' };
    if (answered !== sessionId) {
      // A misrouted cache or proxy: storing the answer would overwrite another call and lose this one.
      return { found: true, unusable: `Get Call answered with another call (${JSON.stringify(answered.slice(0, 80))})` };
    }
    return { found: true, raw };
  }
}
