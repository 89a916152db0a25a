import { ApiError } from './errors.js';
import type { AppHttpClient } from './http-client.js';
import { GetCallEnvelopeSchema, ListEnvelopeSchema, type Pagination } from './schemas.js';

export interface ListCallsPage {
  entries: unknown[];
  pagination: Pagination | undefined;
}

export type GetCallResult = { found: true; raw: unknown } | { found: false };

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
    const body = await this.http.getJson(this.callsBaseUrl, `/calls?page=${page}&perPage=${perPage}`, 'list', page === 0 ? 'List Calls (first page, asked as page=0)' : `List Calls page ${page}`);
    const parsed = ListEnvelopeSchema.safeParse(body);
    if (!parsed.success) {
      throw new ApiError(`${this.http.label}: List Calls page ${page} answered without a "data" array; is callsBaseUrl the Calls API (…/v3)?`, 'client', undefined, 200, 1);
    }
    return { entries: parsed.data.data, pagination: parsed.data.meta?.pagination };
  }

  /** Returns the call's raw record (unwrapping both envelopes), or found:false for ERR_CALL_SESSION_NOT_FOUND. */
  async getCall(sessionId: string): Promise<GetCallResult> {
    let body: unknown;
    try {
      body = await this.http.getJson(this.callsBaseUrl, `/calls/${encodePathSegment(sessionId)}`, 'get', `Get Call ${JSON.stringify(sessionId.slice(0, 80))}`);
    } catch (err) {
      if (err instanceof ApiError && err.kind === 'not_found') return { found: false };
      throw err;
    }
    const parsed = GetCallEnvelopeSchema.safeParse(body);
    if (!parsed.success) return { found: true, raw: body };
    // The record as received, not zod's copy of it: copying turns a "__proto__" key into a prototype.
    const data: unknown = (body as { data: unknown }).data;
    const raw: unknown = Array.isArray(data) ? data[0] : data;
    const answered = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).sessionId : undefined;
    if (typeof answered === 'string' && answered !== sessionId) {
      // A misrouted cache or proxy: storing the answer would overwrite another call and lose this one.
      throw new ApiError(
        `${this.http.label}: Get Call ${JSON.stringify(sessionId.slice(0, 80))} answered with another call (${JSON.stringify(answered.slice(0, 80))}); nothing stored, the call is fetched again on the next run`,
        'client', undefined, 200, 1,
      );
    }
    return { found: true, raw };
  }
}
