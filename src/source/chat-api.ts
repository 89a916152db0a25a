import { ApiError } from './errors.js';
import type { AppHttpClient } from './http-client.js';
import { encodePathSegment } from './calls-api.js';
import { ListEnvelopeSchema, paginationOf, UsageStatsSchema, type Pagination, type UsageStats } from './schemas.js';

/** List Group Members page size: the documented maximum (api-seed.md §8). */
export const MAX_MEMBERS_PER_PAGE = 1000;

export type MembersPage = { found: true; entries: unknown[]; pagination: Pagination | undefined } | { found: false };

/**
 * The service's own minutes of an app for a period, from Usage Metrics: what the billing export sets
 * beside ours (export/billing.ts states the same shape as ServiceUsage, so that it imports nothing
 * from the stages that fetch them).
 */
export interface UsageFigures {
  /** null: the answer did not state it (never taken as 0). */
  audioMinutes: number | null;
  videoMinutes: number | null;
  recordedMinutes: number | null;
}

/** The Chat API endpoints callsync reads: group members and usage metrics. */
export class ChatApi {
  constructor(
    private readonly http: AppHttpClient,
    private readonly chatBaseUrl: string,
  ) {}

  /** One page of a group's members; found:false when the group does not exist (ERR_GUID_NOT_FOUND). */
  async listGroupMembers(guid: string, page: number, perPage = MAX_MEMBERS_PER_PAGE): Promise<MembersPage> {
    let body: unknown;
    try {
      body = await this.http.getJson(this.chatBaseUrl, `/groups/${encodePathSegment(guid)}/members?perPage=${perPage}&page=${page}`, 'members', `List Group Members of ${JSON.stringify(guid.slice(0, 80))} page ${page}`);
    } catch (err) {
      // Only the service's own code proves the group gone (its members are then removed); a bare 404
      // from a proxy is an error of this group's sync, and the stored members stay.
      if (err instanceof ApiError && err.kind === 'not_found' && err.serviceCode === 'ERR_GUID_NOT_FOUND') return { found: false };
      throw err;
    }
    const parsed = ListEnvelopeSchema.safeParse(body);
    if (!parsed.success) {
      throw new ApiError(`${this.http.label}: List Group Members answered without a "data" array; is chatBaseUrl the Chat API (…/v3)?`, 'client', undefined, 200, 1, this.http.appId);
    }
    return { found: true, entries: parsed.data.data, pagination: paginationOf(parsed.data) };
  }

  /**
   * Usage Metrics for [fromSec, toSec). The parameters are described as unix timestamps but the
   * published example uses milliseconds; `unit` says which to send.
   */
  async usageStats(fromSec: number, toSec: number, unit: 's' | 'ms'): Promise<UsageStats> {
    const f = unit === 'ms' ? fromSec * 1000 : fromSec;
    const t = unit === 'ms' ? toSec * 1000 : toSec;
    const body = await this.http.getJson(this.chatBaseUrl, `/stats?fromDate=${f}&toDate=${t}`, 'stats', 'Usage Metrics');
    const parsed = UsageStatsSchema.safeParse(body);
    if (!parsed.success) throw new ApiError(`${this.http.label}: Usage Metrics answered in an unknown shape`, 'client', undefined, 200, 1, this.http.appId);
    return parsed.data;
  }
}
